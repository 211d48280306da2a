#pragma once
// Pending-event set ordered by (time, sequence number): ties at equal time run
// in scheduling order (FIFO), which is what makes a run reproducible.
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/aligned_allocator.hpp"
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
// overlap that event's work. Results do not depend on them.
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
  // The event leaves at once (O(log slots)); a handle of an event that has
  // run or been cancelled cancels nothing.
  void cancel(EventId id);
  [[nodiscard]] bool empty() const { return pending_ == 0; }
  [[nodiscard]] TimeNs next_time() const;  // requires !empty()
  Event pop();                             // requires !empty()
  [[nodiscard]] std::size_t size() const { return pending_; }

 private:
  struct Key {
    TimeNs time;
    std::uint64_t order;  // seq << kSlotBits | slot: unique, so (time, order) sorts as (time, seq)
  };
  static constexpr unsigned kSlotBits = 24;  // at most 2^24 events pending at once (16.7 million)
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  // A free slot's leaf: after every event (no real order is all ones: seq < 2^40).
  static constexpr std::uint64_t kNoOrder = UINT64_MAX;
  static constexpr Key kFreeLeaf{TimeNs(INT64_MAX), kNoOrder};
  static std::uint32_t slot_of(const Key& k) { return static_cast<std::uint32_t>(k.order & kSlotMask); }

  // The pending events are a winner tree over the slots (a tournament):
  // leaf `leaves_ + s` holds slot s's key (a free slot's is after all), and
  // every node above holds the earlier of its two children, so the root,
  // node 1, is the next event. A pop or cancel replays its leaf's path to the
  // root, a push climbs it while its key wins. Unlike a heap's sift, whose
  // next load depends on the comparison before it, a path is fixed by the
  // slot: its siblings' loads all issue at once, and the comparisons run
  // from registers (a 4-ary heap's pop was the largest cost that grew with
  // the cluster: 6 dependent levels at 4,096 GPUs' 2,048 pending events).
  // Keys are unique,
  // so the order of events is the one any priority queue gives.
  void replay(std::size_t leaf);               // the path of `leaf`, after its key grew
  void climb(std::size_t leaf, const Key& k);  // `leaf` was a free slot's; now holds k
  void release(std::uint32_t slot);            // the slot's event leaves; the slot is free
  void grow();                                 // doubles the leaves

  std::vector<Key, base::AlignedAllocator<Key, 64>> nodes_;  // 2 x leaves_; nodes_[0] unused
  std::size_t leaves_ = 0;                                   // a power of two, at least the slots
  std::size_t pending_ = 0;
  // Per slot: the action, the sequence number of the event in it (UINT64_MAX: free), and its hint.
  struct Slot {
    std::function<void()> action;
    std::uint64_t seq = UINT64_MAX;
    std::uint32_t tag = 0;
    PrefetchHint hint;
  };
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace april::sim
