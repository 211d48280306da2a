#pragma once
// Backs the process's heap with transparent huge pages, where glibc can.
//
// A large simulation waits on memory: at 4,096 GPUs a run holds some 270 MiB
// of requests, samples and groups, read in no order the caches can follow,
// and with 4 KiB pages nearly every one of those reads also misses the TLB
// (docs/performance.md measures it). glibc 2.35 and later back the heap with
// transparent huge pages (madvise on each heap extension and each mmapped
// chunk) when the process starts with the tunable glibc.malloc.hugetlb=1 in
// GLIBC_TUNABLES; it is read at startup only, so a program that wants it
// starts itself again with it set. Outputs do not depend on it.
#include <optional>
#include <string>

namespace april::base {

// The GLIBC_TUNABLES value to start again with, given the current one
// (nullptr: unset), glibc's version ("2.36") and the kernel's transparent
// huge page modes ("always [madvise] never"); nothing where starting again
// would not help or was decided already (below).
std::optional<std::string> huge_page_tunables(const char* current, const char* libc_version, const std::string& thp_modes);

// Re-executes this program (/proc/self/exe, the same arguments) with
// glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES, before anything else runs.
// Returns, doing nothing, where that would not help or was decided already:
// GLIBC_TUNABLES names glibc.malloc.hugetlb (set by an earlier start, or by the
// user: glibc.malloc.hugetlb=0 turns this off), glibc is older than 2.35, the
// kernel's transparent huge pages are off ("never"), or the exec fails.
void reexec_with_huge_page_heap(char** argv);

}  // namespace april::base
