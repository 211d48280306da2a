#include "base/huge_page_heap.hpp"

#include <gnu/libc-version.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/sanitized.hpp"

namespace april::base {

namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb";
// Set on the second start to GLIBC_TUNABLES as the user had it ("" when
// unset): it ends the restarts whatever glibc does with GLIBC_TUNABLES, and
// restore_tunables_for_children puts the user's value back.
constexpr const char* kBefore = "APRIL_GLIBC_TUNABLES_BEFORE";

std::string kernel_thp_modes() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(in, modes);
  return modes;
}

}  // namespace

std::optional<std::string> huge_page_tunables(const HugePageStart& s) {
  if (s.restarted || s.secure || !s.ran_by_interpreter || s.under_valgrind || s.sanitized) return std::nullopt;
  if (s.tunables != nullptr && std::strstr(s.tunables, kTunable) != nullptr) return std::nullopt;
  // glibc.malloc.hugetlb exists from glibc 2.35 (its NEWS for 2.35).
  int major = 0, minor = 0;
  if (s.libc_version == nullptr || std::sscanf(s.libc_version, "%d.%d", &major, &minor) != 2) return std::nullopt;
  if (major < 2 || (major == 2 && minor < 35)) return std::nullopt;
  if (s.thp_modes.find("[madvise]") == std::string::npos) return std::nullopt;
  return (s.tunables != nullptr && *s.tunables != '\0' ? std::string(s.tunables) + ":" : std::string()) + kTunable + "=1";
}

void reexec_with_huge_page_heap(char** argv) {
  HugePageStart s;
  s.tunables = std::getenv("GLIBC_TUNABLES");
  s.restarted = std::getenv(kBefore) != nullptr;
  s.libc_version = gnu_get_libc_version();
  s.thp_modes = kernel_thp_modes();
  s.secure = getauxval(AT_SECURE) != 0;
  s.ran_by_interpreter = getauxval(AT_BASE) != 0;
  const char* preload = std::getenv("LD_PRELOAD");
  s.under_valgrind = preload != nullptr && std::strstr(preload, "vgpreload") != nullptr;
  s.sanitized = kSanitizedBuild;
  const auto value = huge_page_tunables(s);
  if (!value) return;
  if (setenv(kBefore, s.tunables != nullptr ? s.tunables : "", 1) != 0) return;
  if (setenv("GLIBC_TUNABLES", value->c_str(), 1) != 0) return;
  // The program's own path, not /proc/self/exe: the kernel names a process
  // after the file it executes, and `ps`, `pgrep april` and top would show
  // "exe". A binary deleted or replaced since reads " (deleted)" and fails.
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    execv(self, argv);
  }
  // The exec failed (no /proc, say): go on as started, without huge pages.
  restore_tunables_for_children();
}

void restore_tunables_for_children() {
  const char* before = std::getenv(kBefore);
  if (before == nullptr) return;
  if (*before == '\0') {
    unsetenv("GLIBC_TUNABLES");
  } else {
    setenv("GLIBC_TUNABLES", before, 1);
  }
  unsetenv(kBefore);
}

}  // namespace april::base
