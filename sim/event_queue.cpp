#include "sim/event_queue.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/cache_lines.hpp"

namespace april::sim {

bool EventQueue::later(const Key& a, const Key& b) {
  // Without branches: the heap's sift compares keys whose order a branch
  // predictor cannot guess.
  return (a.time > b.time) | ((a.time == b.time) & (a.seq > b.seq));
}

EventId EventQueue::push(TimeNs time, std::uint32_t tag, std::function<void()> action, PrefetchHint hint) {
  const std::uint64_t seq = next_seq_++;
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    if (slots_.size() >= UINT32_MAX) throw std::length_error("more than 2^32 pending events");
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  slots_[slot] = Slot{std::move(action), seq, false, hint};
  heap_.push_back(Key{time, seq, slot, tag});
  std::push_heap(heap_.begin(), heap_.end(), later);
  return EventId{seq, slot};
}

void EventQueue::cancel(EventId id) {
  if (id.slot >= slots_.size() || slots_[id.slot].seq != id.seq) return;  // it has run (its slot may hold another)
  slots_[id.slot].cancelled = true;
  slots_[id.slot].action = nullptr;  // what it holds goes now; its key leaves the heap when it surfaces
}

void EventQueue::drop_cancelled_top() {
  while (!heap_.empty() && slots_[heap_.front().slot].cancelled) pop_top();
}

void EventQueue::pop_top() {
  std::pop_heap(heap_.begin(), heap_.end(), later);
  const std::uint32_t slot = heap_.back().slot;
  heap_.pop_back();
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
  // (Issuing them two events ahead as well changed nothing measurable: the
  // lines arrive in one event's time.)
  for (const std::uintptr_t packed : slots_[heap_.front().slot].hint.lines) base::prefetch_lines(packed);
}

bool EventQueue::empty() {
  drop_cancelled_top();
  return heap_.empty();
}

TimeNs EventQueue::next_time() {
  drop_cancelled_top();
  if (heap_.empty()) throw std::logic_error("EventQueue::next_time on an empty queue");
  return heap_.front().time;
}

Event EventQueue::pop() {
  drop_cancelled_top();
  if (heap_.empty()) throw std::logic_error("EventQueue::pop on an empty queue");
  const Key& top = heap_.front();
  Event e{top.time, top.seq, top.tag, std::move(slots_[top.slot].action)};
  pop_top();
  return e;
}

}  // namespace april::sim
