#pragma once
// Keeps freed heap memory in the process instead of handing it back to the
// kernel between a large simulation's steps.
//
// glibc gives the top of its heap back to the kernel when more than its trim
// threshold lies free there, and serves blocks of 128 KiB and up (a
// threshold it raises as they are freed, to 32 MiB) with mmap, unmapped at
// each free. A 4,096-GPU run allocates and frees tens of MiB of batch records
// every step, so each step faulted those pages in again, each one zeroed by
// the kernel: a 10-step run took 3,600 minor faults and 0.03-0.34 s of system
// time where it takes 900-1,200 and 0.00-0.02 s with this
// (bench/results/performance_history_2026-11.md). Outputs do not depend on it; the cost
// is that a process keeps up to its peak heap until it exits, which a sweep
// reuses for its next run.
namespace april::base {

// Fixes glibc's trim threshold at 1 GiB and its mmap threshold at its 32 MiB
// ceiling (mallopt; both are adaptive by default). Call once at start.
void retain_freed_heap();

}  // namespace april::base
