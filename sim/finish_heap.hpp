#pragma once
// An engine's pending finishes, earliest first: a 4-ary min-heap
// (sim/quad_heap.hpp) whose entries are 16 bytes and whose sibling groups
// fill one 64-byte line, so a level of a sift costs one cache line and a
// heap of 256 finishes is 4 levels deep (a binary heap of 40-byte entries
// touched two to three lines a level, 8 levels; at 4,096 GPUs its sifts
// were the largest cost of a completion: issue "per-completion cost flat as
// the cluster grows"). The prefetch hint that entries carried, 16 bytes
// more, is read from the request instead (RunningSet::next_finish_addresses):
// two lines a level cost more than that read.
// Entries are ordered by (clock, key); keys are unique, so the pop order is
// the one any heap gives.
#include <cstddef>
#include <cstdint>

#include "sim/quad_heap.hpp"

namespace april::sim {

struct FinishEntry {
  std::int64_t clock = 0;
  std::uint64_t key = 0;  // unique among the entries held
  // Without branches: which of two finishes is earlier is a coin toss to the predictor.
  [[nodiscard]] bool before(const FinishEntry& o) const {
    return static_cast<bool>(static_cast<int>(clock < o.clock) | (static_cast<int>(clock == o.clock) & static_cast<int>(key < o.key)));
  }
};
static_assert(sizeof(FinishEntry) == 16, "four siblings must fill one cache line");

struct FinishBefore {
  bool operator()(const FinishEntry& a, const FinishEntry& b) const { return a.before(b); }
};
using FinishHeap = QuadHeap<FinishEntry, FinishBefore, 64>;

}  // namespace april::sim
