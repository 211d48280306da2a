#pragma once
// Backs the process's heap with transparent huge pages, where glibc can.
//
// A large simulation waits on memory: at 4,096 GPUs a run holds some 270 MiB
// of requests, samples and groups, read in no order the caches can follow,
// and with 4 KiB pages most of those reads also miss the TLB
// (bench/results/performance_history_2026-11.md measures it). glibc 2.35 and later back the heap with
// transparent huge pages (madvise on each heap extension and each mmapped
// chunk) when the process starts with the tunable glibc.malloc.hugetlb=1 in
// GLIBC_TUNABLES; it is read at startup only, so a program that wants it
// starts itself again with it set. Outputs do not depend on it.
#include <optional>
#include <string>

namespace april::base {

// What decides whether to start again.
struct HugePageStart {
  const char* tunables = nullptr;      // GLIBC_TUNABLES; nullptr when unset
  bool restarted = false;              // this is the second start (the marker below is set)
  const char* libc_version = nullptr;  // gnu_get_libc_version(): "2.36"
  std::string thp_modes;               // the kernel's: "always [madvise] never"; "" when it has none
  bool secure = false;                 // AT_SECURE: setuid, setgid or file capabilities
  bool ran_by_interpreter = true;      // the kernel started ld.so for this program (not ld.so run by hand, not static)
  bool under_valgrind = false;         // valgrind runs the program and cannot exec /proc/self/exe
  bool sanitized = false;              // ASan or TSan: their allocator ignores glibc's tunables
};

// The GLIBC_TUNABLES value to start again with, or nothing where starting
// again would not help, was done already, or was decided by the user:
// GLIBC_TUNABLES names glibc.malloc.hugetlb (glibc.malloc.hugetlb=0 turns this
// off), glibc is older than 2.35, or the kernel's mode is not "madvise"
// ("always" gives huge pages without asking; "never" gives none).
std::optional<std::string> huge_page_tunables(const HugePageStart& start);

// Re-executes this program (the file /proc/self/exe names, the same arguments) with
// glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES, before anything else runs;
// returns where huge_page_tunables says not to, or where the exec fails.
void reexec_with_huge_page_heap(char** argv);

// GLIBC_TUNABLES as the user started april with it, for a program april
// starts (april-live): the added tunable would change that program's heap,
// measured and tuned without it.
void restore_tunables_for_children();

}  // namespace april::base
