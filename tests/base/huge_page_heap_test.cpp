// When `april` starts itself again with glibc's huge-page heap, and when it
// leaves the process as it is (base/huge_page_heap.hpp).
#include <gtest/gtest.h>

#include "base/huge_page_heap.hpp"

namespace april::base {
namespace {

const std::string kMadvise = "always [madvise] never";

TEST(HugePageHeap, AddsTheTunableBesideTheUsersOwn) {
  EXPECT_EQ(huge_page_tunables(nullptr, "2.36", kMadvise), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_page_tunables("", "2.36", kMadvise), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_page_tunables("glibc.malloc.arena_max=2", "2.39", "[always] madvise never"),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
}

TEST(HugePageHeap, LeavesTheProcessAloneWhereItWouldNotHelpOrWasDecided) {
  // Set already: by the start before (no loop), or by the user, =0 to turn it off.
  EXPECT_EQ(huge_page_tunables("glibc.malloc.hugetlb=1", "2.36", kMadvise), std::nullopt);
  EXPECT_EQ(huge_page_tunables("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0", "2.36", kMadvise), std::nullopt);
  // glibc before 2.35 has no such tunable.
  EXPECT_EQ(huge_page_tunables(nullptr, "2.31", kMadvise), std::nullopt);
  EXPECT_EQ(huge_page_tunables(nullptr, "unknown", kMadvise), std::nullopt);
  // The kernel's transparent huge pages off, or absent.
  EXPECT_EQ(huge_page_tunables(nullptr, "2.36", "always madvise [never]"), std::nullopt);
  EXPECT_EQ(huge_page_tunables(nullptr, "2.36", ""), std::nullopt);
}

}  // namespace
}  // namespace april::base
