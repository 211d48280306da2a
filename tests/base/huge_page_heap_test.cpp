// When `april` starts itself again with glibc's huge-page heap, and when it
// leaves the process as it is (base/huge_page_heap.hpp).
#include <gtest/gtest.h>

#include <cstdlib>

#include "base/huge_page_heap.hpp"

namespace april::base {
namespace {

HugePageStart usual() {
  HugePageStart s;
  s.libc_version = "2.36";
  s.thp_modes = "always [madvise] never";
  return s;
}

TEST(HugePageHeap, AddsTheTunableBesideTheUsersOwn) {
  auto s = usual();
  EXPECT_EQ(huge_page_tunables(s), "glibc.malloc.hugetlb=1");
  s.tunables = "";
  EXPECT_EQ(huge_page_tunables(s), "glibc.malloc.hugetlb=1");
  s.tunables = "glibc.malloc.arena_max=2";
  s.libc_version = "2.35";
  EXPECT_EQ(huge_page_tunables(s), "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
}

TEST(HugePageHeap, LeavesTheProcessAloneWhereItWouldNotHelpOrWasDecided) {
  const auto expect_none = [](HugePageStart s, const char* why) { EXPECT_EQ(huge_page_tunables(s), std::nullopt) << why; };
  auto s = usual();
  s.restarted = true;
  expect_none(s, "the second start, whatever GLIBC_TUNABLES holds then");
  s = usual();
  s.tunables = "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0";
  expect_none(s, "the user's own choice");
  s = usual();
  s.libc_version = "2.31";
  expect_none(s, "glibc before 2.35 has no such tunable");
  s.libc_version = "unknown";
  expect_none(s, "an unreadable version");
  s = usual();
  s.thp_modes = "[always] madvise never";
  expect_none(s, "huge pages without asking");
  s.thp_modes = "always madvise [never]";
  expect_none(s, "no huge pages");
  s.thp_modes = "";
  expect_none(s, "a kernel without them");
  s = usual();
  s.secure = true;
  expect_none(s, "setuid, setgid or file capabilities: glibc drops tunables there");
  s = usual();
  s.ran_by_interpreter = false;
  expect_none(s, "ld.so run by hand: /proc/self/exe is ld.so");
  s = usual();
  s.under_valgrind = true;
  expect_none(s, "valgrind");
  s = usual();
  s.sanitized = true;
  expect_none(s, "a sanitizer's allocator");
}

TEST(HugePageHeap, ChildrenGetTheUsersTunablesBack) {
  setenv("APRIL_GLIBC_TUNABLES_BEFORE", "glibc.malloc.arena_max=2", 1);
  setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", 1);
  restore_tunables_for_children();
  EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.malloc.arena_max=2");
  EXPECT_EQ(std::getenv("APRIL_GLIBC_TUNABLES_BEFORE"), nullptr);
  setenv("APRIL_GLIBC_TUNABLES_BEFORE", "", 1);
  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
  restore_tunables_for_children();
  EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr);
  // Not started again: nothing to restore, the user's value stays.
  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0", 1);
  restore_tunables_for_children();
  EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=0");
  unsetenv("GLIBC_TUNABLES");
}

}  // namespace
}  // namespace april::base
