// retain_freed_heap: a block of tens of MiB, as a large run's batch records
// are, comes from the heap and stays in it when freed, so that the next step
// does not fault its pages in again (base/heap_retention.hpp).
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include "base/heap_retention.hpp"
#include "base/sanitized.hpp"

namespace april::base {
namespace {

TEST(HeapRetention, AFreedBlockOfTensOfMiBStaysInTheHeap) {
  if (kSanitizedBuild) GTEST_SKIP() << "a sanitizer's allocator replaces glibc's";
  retain_freed_heap();
  constexpr std::size_t kBlockBytes = std::size_t{24} << 20;
  const struct mallinfo2 before = mallinfo2();
  void* block = std::malloc(kBlockBytes);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBlockBytes);
  const struct mallinfo2 held = mallinfo2();
  // From the heap, not mmap (glibc's default serves it with mmap).
  EXPECT_EQ(held.hblkhd, before.hblkhd);
  EXPECT_GE(held.arena, before.arena + kBlockBytes);
  std::free(block);
  const struct mallinfo2 after = mallinfo2();
  // Still the process's: the heap was not trimmed (by default it is, past 128 KiB free at its top).
  EXPECT_EQ(after.arena, held.arena);
  EXPECT_GE(after.fordblks, kBlockBytes);
}

}  // namespace
}  // namespace april::base
