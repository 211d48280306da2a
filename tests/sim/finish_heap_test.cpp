// The engine's finish heap against std::priority_queue: the same entries come
// out in the same (clock, slot) order under any mix of pushes, pops, clears
// and rebuilds, so that completions and their fingerprints are unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <queue>
#include <random>
#include <vector>

#include "sim/finish_heap.hpp"

namespace april::sim {
namespace {

struct Later {
  bool operator()(const FinishEntry& a, const FinishEntry& b) const { return b.before(a); }
};
using Reference = std::priority_queue<FinishEntry, std::vector<FinishEntry>, Later>;

TEST(FinishHeap, OrdersByClockThenSlot) {
  FinishHeap h;
  EXPECT_TRUE(h.empty());
  h.push(FinishEntry::of(5, 2));
  h.push(FinishEntry::of(3, 9));
  h.push(FinishEntry::of(5, 1));
  h.push(FinishEntry::of(3, 4));
  h.push(FinishEntry::of(FinishEntry::kMaxClock - 1, FinishEntry::kSlotMask));
  h.push(FinishEntry::of(0, FinishEntry::kSlotMask));
  std::vector<std::pair<std::int64_t, std::size_t>> out;
  while (!h.empty()) {
    out.emplace_back(h.top().clock(), h.top().slot());
    h.pop();
  }
  EXPECT_EQ(out, (std::vector<std::pair<std::int64_t, std::size_t>>{
                     {0, FinishEntry::kSlotMask}, {3, 4}, {3, 9}, {5, 1}, {5, 2}, {FinishEntry::kMaxClock - 1, FinishEntry::kSlotMask}}));
}

TEST(FinishHeap, SiblingGroupsStartOnALine) {
  FinishHeap h;
  static_assert(FinishHeap::kArity == 8, "eight 8-byte entries to a line");
  for (std::size_t k = 0; k < 100; ++k) h.push(FinishEntry::of(static_cast<std::int64_t>(k), k));
  // The root is logical 0; its children, 1..8, must share one line.
  const auto root = reinterpret_cast<std::uintptr_t>(&h.top());
  EXPECT_EQ((root + sizeof(FinishEntry)) % 64, 0U);
}

TEST(FinishHeap, MatchesAPriorityQueueUnderRandomOperations) {
  std::mt19937_64 rng(11);
  FinishHeap h;
  Reference ref;
  std::size_t next_slot = 0;
  std::int64_t clock = 0;
  for (int op = 0; op < 200000; ++op) {
    const auto r = rng() % 100;
    if (r < 48) {
      // Finishes cluster on a few clocks, so ties on the clock are common.
      const FinishEntry e = FinishEntry::of(clock + static_cast<std::int64_t>(rng() % 64), next_slot++ & FinishEntry::kSlotMask);
      h.push(e);
      ref.push(e);
    } else if (r < 96) {
      if (ref.empty()) {
        EXPECT_TRUE(h.empty());
        continue;
      }
      ASSERT_FALSE(h.empty());
      ASSERT_EQ(h.top().packed, ref.top().packed) << "op " << op;
      clock = h.top().clock();
      h.pop();
      ref.pop();
    } else if (r < 99) {
      // A rebuild from the entries held (as after a preemption storm).
      std::vector<FinishEntry> held;
      while (!ref.empty()) {
        held.push_back(ref.top());
        ref.pop();
      }
      std::shuffle(held.begin(), held.end(), rng);
      h.clear();
      for (const auto& e : held) {
        h.add_unordered(e);
        ref.push(e);
      }
      h.heapify();
    } else {
      h.clear();
      ref = Reference();
    }
    ASSERT_EQ(h.size(), ref.size());
  }
}

}  // namespace
}  // namespace april::sim
