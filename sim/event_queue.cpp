#include "sim/event_queue.hpp"

#include <algorithm>
#include <stdexcept>

namespace april::sim {

bool EventQueue::later(const Event& a, const Event& b) {
  if (a.time != b.time) return a.time > b.time;
  return a.seq > b.seq;
}

EventId EventQueue::push(TimeNs time, std::uint32_t tag, std::function<void()> action) {
  const EventId id = next_seq_++;
  heap_.push_back(Event{time, id, tag, std::move(action)});
  std::push_heap(heap_.begin(), heap_.end(), later);
  return id;
}

void EventQueue::cancel(EventId id) {
  auto it = std::lower_bound(cancelled_.begin(), cancelled_.end(), id);
  if (it == cancelled_.end() || *it != id) cancelled_.insert(it, id);
}

void EventQueue::drop_cancelled_top() {
  while (!heap_.empty()) {
    auto it = std::lower_bound(cancelled_.begin(), cancelled_.end(), heap_.front().seq);
    if (it == cancelled_.end() || *it != heap_.front().seq) return;
    cancelled_.erase(it);
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
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
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Event e = std::move(heap_.back());
  heap_.pop_back();
  return e;
}

}  // namespace april::sim
