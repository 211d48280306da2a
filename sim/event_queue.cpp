#include "sim/event_queue.hpp"

#include <stdexcept>

#include "base/cache_lines.hpp"

namespace april::sim {

namespace {

// Whether a comes before b, without branches: the tree compares keys whose
// order a branch predictor cannot guess.
template <typename Key>
std::uint64_t before_mask(const Key& a, const Key& b) {
  const auto before = static_cast<std::uint64_t>(static_cast<int>(a.time < b.time) |
                                                 (static_cast<int>(a.time == b.time) & static_cast<int>(a.order < b.order)));
  return std::uint64_t{0} - before;  // all ones when a is first
}

// The earlier of a and b, chosen by a mask (a ternary may compile to a branch).
template <typename Key>
Key earlier_of(const Key& a, const Key& b) {
  const std::uint64_t take_b = before_mask(b, a);
  const auto at = static_cast<std::uint64_t>(a.time.ns()), bt = static_cast<std::uint64_t>(b.time.ns());
  return Key{TimeNs(static_cast<std::int64_t>(at ^ ((at ^ bt) & take_b))), a.order ^ ((a.order ^ b.order) & take_b)};
}

}  // namespace

EventId EventQueue::push(TimeNs time, std::uint32_t tag, std::function<void()> action, PrefetchHint hint) {
  if (next_seq_ >> (64 - kSlotBits) != 0) throw std::length_error("more than 2^40 events scheduled in one simulation");
  const std::uint64_t seq = next_seq_++;
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    if (slots_.size() > kSlotMask) throw std::length_error("more than 2^24 events pending at once");
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
    if (slots_.size() > leaves_) grow();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  slots_[slot] = Slot{std::move(action), seq, tag, hint};
  climb(leaves_ + slot, Key{time, seq << kSlotBits | slot});
  ++pending_;
  return EventId{seq, slot};
}

void EventQueue::cancel(EventId id) {
  if (id.slot >= slots_.size() || slots_[id.slot].seq != id.seq) return;  // it has run (its slot may hold another)
  release(id.slot);
}

void EventQueue::release(std::uint32_t slot) {
  const std::size_t leaf = leaves_ + slot;
  nodes_[leaf] = kFreeLeaf;
  replay(leaf);
  // Free: a later handle to it no longer matches. Its action has been moved
  // out (pop) or goes now (cancel); the hint stays until the slot is reused.
  Slot& freed = slots_[slot];
  freed.action = nullptr;
  freed.seq = UINT64_MAX;
  free_slots_.push_back(slot);
  --pending_;
}

void EventQueue::replay(std::size_t leaf) {
  // Every sibling on the path is loaded regardless of the comparisons, so
  // the loads overlap; only the selects form a chain.
  Key k = nodes_[leaf];
  for (std::size_t i = leaf; i > 1; i >>= 1) {
    k = earlier_of(k, nodes_[i ^ 1]);
    nodes_[i >> 1] = k;
  }
}

void EventQueue::climb(std::size_t leaf, const Key& k) {
  // The leaf was after everything, so each ancestor becomes k or stays; the
  // first that stays keeps every one above it.
  nodes_[leaf] = k;
  for (std::size_t i = leaf >> 1; i >= 1; i >>= 1) {
    if (before_mask(k, nodes_[i]) == 0) return;
    nodes_[i] = k;
  }
}

void EventQueue::grow() {
  const std::size_t leaves = leaves_ == 0 ? 8 : 2 * leaves_;
  std::vector<Key, base::AlignedAllocator<Key, 64>> nodes(2 * leaves, kFreeLeaf);
  for (std::size_t s = 0; s < leaves_; ++s) nodes[leaves + s] = nodes_[leaves_ + s];
  for (std::size_t i = leaves - 1; i >= 1; --i) nodes[i] = earlier_of(nodes[2 * i], nodes[2 * i + 1]);
  nodes_.swap(nodes);
  leaves_ = leaves;
}

void EventQueue::prefetch_next() const {
  if (pending_ == 0) return;
  // (Issuing the event after next's as well changed nothing on 2026-11-26
  // and was 4% slower on 2026-11-28: the lines arrive in one event's time,
  // and the core's fill buffers are the limit.)
  for (const std::uintptr_t packed : slots_[slot_of(nodes_[1])].hint.lines) base::prefetch_lines(packed);
}

TimeNs EventQueue::next_time() const {
  if (pending_ == 0) throw std::logic_error("EventQueue::next_time on an empty queue");
  return nodes_[1].time;
}

Event EventQueue::pop() {
  if (pending_ == 0) throw std::logic_error("EventQueue::pop on an empty queue");
  const Key k = nodes_[1];
  const std::uint32_t slot = slot_of(k);
  Slot& s = slots_[slot];
  Event e{k.time, s.seq, s.tag, std::move(s.action)};
  release(slot);
  return e;
}

}  // namespace april::sim
