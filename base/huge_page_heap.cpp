#include "base/huge_page_heap.hpp"

#include <gnu/libc-version.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace april::base {

namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb";

// The kernel's transparent huge page modes, or "" where it has none.
std::string kernel_thp_modes() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(in, modes);
  return modes;
}

}  // namespace

std::optional<std::string> huge_page_tunables(const char* current, const char* libc_version, const std::string& thp_modes) {
  if (current != nullptr && std::string(current).find(kTunable) != std::string::npos) return std::nullopt;
  // glibc.malloc.hugetlb exists from glibc 2.35 (its NEWS for 2.35).
  int major = 0, minor = 0;
  if (libc_version == nullptr || std::sscanf(libc_version, "%d.%d", &major, &minor) != 2) return std::nullopt;
  if (major < 2 || (major == 2 && minor < 35)) return std::nullopt;
  // The bracketed mode is the kernel's: glibc's madvise helps under
  // "madvise" (and is moot under "always"); under "never", or with no
  // transparent huge pages at all, nothing does.
  if (thp_modes.empty() || thp_modes.find("[never]") != std::string::npos) return std::nullopt;
  return (current != nullptr && *current != '\0' ? std::string(current) + ":" : std::string()) + kTunable + "=1";
}

void reexec_with_huge_page_heap(char** argv) {
  const auto value = huge_page_tunables(std::getenv("GLIBC_TUNABLES"), gnu_get_libc_version(), kernel_thp_modes());
  if (!value || setenv("GLIBC_TUNABLES", value->c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // The exec failed (no /proc, say): go on as started, without huge pages.
  // The variable stays set, so a program this one starts does not try again.
}

}  // namespace april::base
