#include "sim/event_queue.hpp"

#include <stdexcept>

#include "base/cache_lines.hpp"

namespace april::sim {

bool EventQueue::later(const Key& a, const Key& b) {
  // Without branches: the heap's sift compares keys whose order a branch
  // predictor cannot guess.
  return static_cast<bool>(static_cast<int>(a.time > b.time) | (static_cast<int>(a.time == b.time) & static_cast<int>(a.order > b.order)));
}

EventId EventQueue::push(TimeNs time, std::uint32_t tag, std::function<void()> action, PrefetchHint hint) {
  if (next_seq_ >> (64 - kSlotBits) != 0) throw std::length_error("more than 2^40 events scheduled in one simulation");
  const std::uint64_t seq = next_seq_++;
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    if (slots_.size() > kSlotMask) throw std::length_error("more than 2^24 events pending at once");
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  slots_[slot] = Slot{std::move(action), seq, tag, false, hint};
  heap_.push_back(Key{});
  sift_up_from(heap_size() - 1, Key{time, seq << kSlotBits | slot});
  return EventId{seq, slot};
}

void EventQueue::sift_up_from(std::size_t i, const Key k) {
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!later(at(parent), k)) break;
    at(i) = at(parent);
    i = parent;
  }
  at(i) = k;
}

std::size_t EventQueue::earliest_of_four(std::size_t first) {
  const std::size_t a = later(at(first), at(first + 1)) ? first + 1 : first;
  const std::size_t b = later(at(first + 2), at(first + 3)) ? first + 3 : first + 2;
  return later(at(a), at(b)) ? b : a;
}

std::size_t EventQueue::earliest_of_few(std::size_t first, std::size_t n) {
  std::size_t best = first;
  for (std::size_t c = first + 1; c < n; ++c) best = later(at(best), at(c)) ? c : best;
  return best;
}

void EventQueue::cancel(EventId id) {
  if (id.slot >= slots_.size() || slots_[id.slot].seq != id.seq) return;  // it has run (its slot may hold another)
  slots_[id.slot].cancelled = true;
  slots_[id.slot].action = nullptr;  // what it holds goes now; its key leaves the heap when it surfaces
}

void EventQueue::drop_cancelled_top() {
  while (heap_size() > 0 && slots_[slot_of(top())].cancelled) pop_top();
}

void EventQueue::pop_top() {
  const std::uint32_t slot = slot_of(top());
  // Floyd's order: the hole at the top walks down to a leaf along the
  // earliest children (one choice a level, no comparison with the moved
  // key), then the last key fills it and climbs, rarely more than a level.
  const Key last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_size();
  if (n > 0) {
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      const std::size_t best = first + kArity <= n ? earliest_of_four(first) : earliest_of_few(first, n);
      at(i) = at(best);
      i = best;
    }
    sift_up_from(i, last);
  }
  // Free: a later handle to it no longer matches. Its action has been moved
  // out (pop) or dropped (cancel); the hint stays until the slot is reused.
  Slot& freed = slots_[slot];
  freed.action = nullptr;
  freed.seq = UINT64_MAX;
  freed.cancelled = false;
  free_slots_.push_back(slot);
}

void EventQueue::prefetch_next() const {
  if (heap_size() == 0) return;
  // (Issuing them two events ahead as well changed nothing measurable: the
  // lines arrive in one event's time.)
  for (const std::uintptr_t packed : slots_[slot_of(top())].hint.lines) base::prefetch_lines(packed);
}

bool EventQueue::empty() {
  drop_cancelled_top();
  return heap_size() == 0;
}

TimeNs EventQueue::next_time() {
  drop_cancelled_top();
  if (heap_size() == 0) throw std::logic_error("EventQueue::next_time on an empty queue");
  return top().time;
}

Event EventQueue::pop() {
  drop_cancelled_top();
  if (heap_size() == 0) throw std::logic_error("EventQueue::pop on an empty queue");
  const Key k = top();
  Slot& s = slots_[slot_of(k)];
  Event e{k.time, s.seq, s.tag, std::move(s.action)};
  pop_top();
  return e;
}

}  // namespace april::sim
