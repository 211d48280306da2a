#pragma once
// How much memory this machine gives a process: what the runs that estimate
// their memory up front (simulate, live) are checked against.
#include <cstdint>

namespace april::base {

// Physical memory, or the cgroup's memory.max when that is lower; 0 when
// neither can be read.
std::uint64_t machine_memory_bytes();

}  // namespace april::base
