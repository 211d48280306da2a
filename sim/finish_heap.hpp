#pragma once
// An engine's pending finishes, earliest first: an 8-ary min-heap
// (sim/line_heap.hpp) of 8-byte entries, eight siblings to a 64-byte line, so
// a heap of 256 finishes is 3 levels below its top where 16-byte entries
// made it 4 (a binary heap of 40-byte entries touched two to three lines a
// level, 8 levels). A pop's levels are dependent misses at 4,096 GPUs: they
// were the largest cost of a completion.
// An entry is the finish clock and the request's slot in one word, so it
// orders as (clock, slot); slots are in admission order, so that is the
// (clock, admission) order the engine reports finishes in. Entries are unique
// among the live requests; a stale one (a preempted request's) may equal a
// live one, and the running set tells them apart (RunningSet::take_finished).
#include <cstddef>
#include <cstdint>

#include "sim/line_heap.hpp"

namespace april::sim {

struct FinishEntry {
  static constexpr int kSlotBits = 24;  // at most 2^24 requests running on one engine
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  static constexpr std::int64_t kMaxClock = (std::int64_t{1} << (64 - kSlotBits)) - 1;  // 2^40 - 1 iterations

  std::uint64_t packed = 0;  // clock << kSlotBits | slot

  // Requires 0 <= clock <= kMaxClock and slot <= kSlotMask (RunningSet checks).
  static FinishEntry of(std::int64_t clock, std::size_t slot) {
    return {static_cast<std::uint64_t>(clock) << kSlotBits | static_cast<std::uint64_t>(slot)};
  }
  [[nodiscard]] std::int64_t clock() const { return static_cast<std::int64_t>(packed >> kSlotBits); }
  [[nodiscard]] std::size_t slot() const { return static_cast<std::size_t>(packed & kSlotMask); }
  [[nodiscard]] bool before(const FinishEntry& o) const { return packed < o.packed; }
};
static_assert(sizeof(FinishEntry) == 8, "eight siblings must fill one cache line");

struct FinishBefore {
  bool operator()(const FinishEntry& a, const FinishEntry& b) const { return a.before(b); }
};
using FinishHeap = LineHeap<FinishEntry, FinishBefore, 64>;

}  // namespace april::sim
