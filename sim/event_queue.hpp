#pragma once
// Pending-event set ordered by (time, sequence number): ties at equal time run
// in scheduling order (FIFO), which is what makes a run reproducible.
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/line_heap.hpp"
#include "sim/time.hpp"

namespace april::sim {

// A scheduled event's handle, for cancelling it: its sequence number (never
// reused) and where it waits. A handle of an event that has run cancels nothing.
struct EventId {
  std::uint64_t seq = UINT64_MAX;
  std::uint32_t slot = UINT32_MAX;
};

// What an event's action will read first, as spans of cache lines packed in
// one word each (base/cache_lines.hpp; never read through, so one that has
// gone stale costs a wasted fetch): while the event before it runs, the
// queue asks the cache for them. A large cluster's state is far
// past the caches, and each event's first reads are misses in a chain (the
// engine, its next request, the loop's sample); issued one event ahead they
// overlap that event's work (issue: per-completion cost flat as the cluster
// grows). Results do not depend on them.
struct PrefetchHint {
  std::array<std::uintptr_t, 6> lines{};  // each base::cache_lines packed; 0: none
};

struct Event {
  TimeNs time;
  std::uint64_t seq = 0;
  std::uint32_t tag = 0;  // what kind of event; folded into the run fingerprint
  std::function<void()> action;
};

class EventQueue {
 public:
  EventId push(TimeNs time, std::uint32_t tag, std::function<void()> action, PrefetchHint hint = {});
  // Asks the cache for the next event's hint.
  void prefetch_next() const;
  // Cancelled events are dropped lazily when they reach the top; a cancel is
  // O(1) (engines cut their segments at every submission to a busy engine,
  // so a large run cancels about as often as it schedules).
  void cancel(EventId id);
  [[nodiscard]] bool empty();
  [[nodiscard]] TimeNs next_time();  // requires !empty()
  Event pop();                       // requires !empty()
  [[nodiscard]] std::size_t size_including_cancelled() const { return heap_.size(); }

 private:
  // The heap orders 16-byte plain keys, four siblings to a cache line (a
  // 4-ary heap: 6 levels at 4,096 events where a binary heap of the 24-byte
  // keys it replaced was 12, each of them part of a line); each event's
  // action waits in a slot of its own (the heap was 5-8% of a 4,096-GPU run;
  // issue: per-completion cost flat as the cluster grows).
  struct Key {
    TimeNs time;
    std::uint64_t order;  // seq << kSlotBits | slot: unique, so (time, order) sorts as (time, seq)
  };
  // Without branches: the heap's sift compares keys whose order a branch
  // predictor cannot guess.
  struct Earlier {
    bool operator()(const Key& a, const Key& b) const {
      return static_cast<bool>(static_cast<int>(a.time < b.time) | (static_cast<int>(a.time == b.time) & static_cast<int>(a.order < b.order)));
    }
  };
  static constexpr unsigned kSlotBits = 24;  // at most 2^24 events pending at once (16.7 million)
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  static std::uint32_t slot_of(const Key& k) { return static_cast<std::uint32_t>(k.order & kSlotMask); }
  void drop_cancelled_top();
  void pop_top();  // removes the heap's top and frees its slot's action

  LineHeap<Key, Earlier, 64> heap_;  // four keys to a cache line: a 4-ary heap
  // Per slot: the action, the sequence number of the event in it, and whether it was cancelled.
  struct Slot {
    std::function<void()> action;
    std::uint64_t seq = UINT64_MAX;
    std::uint32_t tag = 0;
    bool cancelled = false;
    PrefetchHint hint;
  };
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace april::sim
