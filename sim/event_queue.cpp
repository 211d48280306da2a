#include "sim/event_queue.hpp"

#include <stdexcept>

#include "base/cache_lines.hpp"

namespace april::sim {

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
  heap_.push(Key{time, seq << kSlotBits | slot});
  return EventId{seq, slot};
}

void EventQueue::cancel(EventId id) {
  if (id.slot >= slots_.size() || slots_[id.slot].seq != id.seq) return;  // it has run (its slot may hold another)
  slots_[id.slot].cancelled = true;
  slots_[id.slot].action = nullptr;  // what it holds goes now; its key leaves the heap when it surfaces
}

void EventQueue::drop_cancelled_top() {
  while (!heap_.empty() && slots_[slot_of(heap_.top())].cancelled) pop_top();
}

void EventQueue::pop_top() {
  const std::uint32_t slot = slot_of(heap_.top());
  heap_.pop();
  // Free: a later handle to it no longer matches. Its action has been moved
  // out (pop) or dropped (cancel); the hint stays until the slot is reused.
  Slot& freed = slots_[slot];
  freed.action = nullptr;
  freed.seq = UINT64_MAX;
  freed.cancelled = false;
  free_slots_.push_back(slot);
}

void EventQueue::prefetch_next() const {
  if (heap_.empty()) return;
  // (Issuing the event after next's as well changed nothing on 2026-11-26
  // and was 4% slower on 2026-11-28: the lines arrive in one event's time,
  // and the core's fill buffers are the limit.)
  for (const std::uintptr_t packed : slots_[slot_of(heap_.top())].hint.lines) base::prefetch_lines(packed);
}

bool EventQueue::empty() {
  drop_cancelled_top();
  return heap_.empty();
}

TimeNs EventQueue::next_time() {
  drop_cancelled_top();
  if (heap_.empty()) throw std::logic_error("EventQueue::next_time on an empty queue");
  return heap_.top().time;
}

Event EventQueue::pop() {
  drop_cancelled_top();
  if (heap_.empty()) throw std::logic_error("EventQueue::pop on an empty queue");
  const Key k = heap_.top();
  Slot& s = slots_[slot_of(k)];
  Event e{k.time, s.seq, s.tag, std::move(s.action)};
  pop_top();
  return e;
}

}  // namespace april::sim
