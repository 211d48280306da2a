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
  [[nodiscard]] std::size_t size_including_cancelled() const { return heap_size(); }

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
  static constexpr unsigned kSlotBits = 24;  // at most 2^24 events pending at once (16.7 million)
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  static constexpr std::size_t kArity = 4;
  // Logical entry i sits at heap_[i + kPad]: the children of i, 4i + 1 ..
  // 4i + 4, start at a multiple of 4 entries, 64 bytes, from the aligned base.
  static constexpr std::size_t kPad = kArity - 1;
  static std::uint32_t slot_of(const Key& k) { return static_cast<std::uint32_t>(k.order & kSlotMask); }
  [[nodiscard]] std::size_t heap_size() const { return heap_.size() - kPad; }
  [[nodiscard]] const Key& top() const { return heap_[kPad]; }
  Key& at(std::size_t i) { return heap_[i + kPad]; }
  void sift_up_from(std::size_t i, Key k);
  [[nodiscard]] std::size_t earliest_of_four(std::size_t first);
  [[nodiscard]] std::size_t earliest_of_few(std::size_t first, std::size_t n);
  void drop_cancelled_top();
  void pop_top();  // removes the heap's top and frees its slot's action
  static bool later(const Key& a, const Key& b);

  std::vector<Key, base::AlignedAllocator<Key, 64>> heap_ = decltype(heap_)(kPad);
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
