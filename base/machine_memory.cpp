#include "base/machine_memory.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace april::base {

std::uint64_t machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  std::uint64_t bytes = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
  // A container's limit (cgroup v2) is what the kernel enforces.
  std::ifstream limit("/sys/fs/cgroup/memory.max");
  std::string text;
  if (limit >> text && !text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 20) {
    const auto cg = std::stoull(text);
    if (cg > 0) bytes = bytes == 0 ? cg : std::min(bytes, static_cast<std::uint64_t>(cg));
  }
  return bytes;
}

}  // namespace april::base
