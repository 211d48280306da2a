#pragma once
// Process settings every live measurement shares (april live, profile,
// validate and the live benches), so that a profile times the same runtime
// the live run uses.
#include <cstdint>

namespace april::live {

// - torch intra-op threads: `torch_threads`;
// - one BLAS thread (torch's own threads do the parallel work); OpenBLAS reads
//   its environment at load time, so it is set through its API when present;
// - denormal floats flushed to zero: tiny attention weights and activations
//   otherwise take the CPU's slow path, so an iteration's time depended on
//   the weights' values (a random profiling model vs a trained one); with
//   flushing, `april calibrate`'s noise figure went 3.4% -> 0.8% and its
//   held-out error 8.9% -> 3.6%;
// - glibc malloc keeps freed tensor memory instead of returning every large
//   block to the kernel: with the default dynamic mmap threshold, each
//   iteration's multi-MB temporaries were fresh mmaps and page faults, which
//   on a 2-core machine doubled the spread of iteration times (measured by
//   `april calibrate`'s noise figure: 4.2% -> 2.1%), and never hands the
//   heap's free pages back (each page faulted in again costs 3.1 s per GiB
//   on the virtual machine);
// - one malloc arena for all threads, so that the trainer's thread beside the
//   engine keeps its freed memory as the main thread does (see the .cpp).
// Idempotent; these are process-wide by nature, not state of this program.
void configure_runtime(std::int64_t torch_threads);

// The malloc part of configure_runtime alone, for the first line of main():
// the one-arena limit only holds for threads that first allocate after it
// is set (see the .cpp).
void configure_allocator();

// Run once on each further thread that computes with torch (a trainer's
// thread): OpenMP's thread count is per thread, so it gets the same
// `torch_threads` as the thread that called configure_runtime.
void configure_thread(std::int64_t torch_threads);

// Minor page faults the calling thread has taken so far (getrusage's
// RUSAGE_THREAD; 0 where that is not available). A new page is expensive on a
// virtual machine (3.1 s per GiB first touched on the 2-core one), so a train
// step that grows the heap is slow for a reason no model of its shape sees:
// the live train log records each step's faults to tell such steps apart.
std::int64_t thread_minor_faults();

}  // namespace april::live
