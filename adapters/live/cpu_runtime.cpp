#include "adapters/live/cpu_runtime.hpp"

#include <dlfcn.h>
#include <sys/resource.h>
#include <torch/torch.h>

#include <algorithm>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace april::live {

void configure_thread(std::int64_t torch_threads) { torch::set_num_threads(static_cast<int>(std::max<std::int64_t>(1, torch_threads))); }

void configure_allocator() {
#if defined(__GLIBC__)
  // 32 MiB is glibc's largest mmap threshold on 64-bit. No trimming: a page
  // handed back is faulted in again when a later step needs it, at 3.1 s per
  // GiB on the 2-core virtual machine, and validate grows the heap before the
  // live runs so that no live step pays for that (validation.cpp). A trim
  // threshold (1 GiB until 2026-11-23) would undo that growth: once the free
  // top exceeds it, glibc hands back all of it.
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, -1);
  // One arena for every thread. glibc gives each new thread an arena of its
  // own, made of 64 MiB heaps that are unmapped whenever they empty, so a
  // train step on the trainer's thread faulted its tensors' pages in afresh
  // each time: 16,626 minor faults per step against 284, and 1.5x the step
  // time of the same step on the main thread (bench/
  // live_trainer_thread_bench.cpp, 2-core machine). That is a
  // cost of the allocator, not of overlapping, and it made an overlapped
  // run's trainer slower than the profile predicted. The main arena keeps
  // its pages (the trim threshold above); its lock is taken a few hundred
  // times per step, for tensors, not per element.
  // The limit only governs arenas made after it is set: arenas that earlier
  // threads made stay in use, and once there are more than eight glibc
  // fixes its limit for good (8 x cores). Hence configure_allocator() as the
  // first line of april-live's main() and of the live tests': on a 16-core
  // machine an earlier test's torch threads had made arenas, and a train
  // step on a new thread faulted 7,100-7,900 pages where under 1,700 is
  // expected (H200 machine, 2026-11-26).
  mallopt(M_ARENA_MAX, 1);
#endif
}

void configure_runtime(std::int64_t torch_threads) {
  using SetThreads = void (*)(int);
  if (auto* f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) f(1);
  torch::set_num_threads(static_cast<int>(std::max<std::int64_t>(1, torch_threads)));
  torch::globalContext().setFlushDenormal(true);
  configure_allocator();
}

std::int64_t thread_minor_faults() {
#if defined(RUSAGE_THREAD)
  rusage u{};
  if (getrusage(RUSAGE_THREAD, &u) == 0) return static_cast<std::int64_t>(u.ru_minflt);
#endif
  return 0;
}

}  // namespace april::live
