#pragma once
// Reading a whole input file with a size bound. A scenario or a model config
// is kilobytes; without a bound, /dev/zero or a mistaken multi-gigabyte file
// given as one would grow until the kernel kills the process.
#include <cstddef>
#include <string>

namespace april::base {

// Bounds that fit what each kind of file holds, with room to spare.
inline constexpr std::size_t kSmallJsonMaxBytes = 16u << 20;  // scenarios, configs, hardware, topologies

// The contents of the regular file `path`, read in chunks so that memory
// stays within `max_bytes` plus one chunk even for a file growing while read.
// Throws ConfigError naming `path` and `what` ("model config") when it cannot
// be opened or read, is a folder, a device or a pipe, or holds more than
// `max_bytes`.
std::string read_file_bounded(const std::string& path, std::size_t max_bytes, const std::string& what);

}  // namespace april::base
