#pragma once
// Pending-event set ordered by (time, sequence number): ties at equal time run
// in scheduling order (FIFO), which is what makes a run reproducible.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/time.hpp"

namespace april::sim {

using EventId = std::uint64_t;  // the event's sequence number; never reused

struct Event {
  TimeNs time;
  EventId seq = 0;
  std::uint32_t tag = 0;  // what kind of event; folded into the run fingerprint
  std::function<void()> action;
};

class EventQueue {
 public:
  EventId push(TimeNs time, std::uint32_t tag, std::function<void()> action);
  // Cancelled events are dropped lazily when they reach the top.
  void cancel(EventId id);
  [[nodiscard]] bool empty();
  [[nodiscard]] TimeNs next_time();  // requires !empty()
  Event pop();                       // requires !empty()
  [[nodiscard]] std::size_t size_including_cancelled() const { return heap_.size(); }

 private:
  void drop_cancelled_top();
  static bool later(const Event& a, const Event& b);

  std::vector<Event> heap_;
  std::vector<EventId> cancelled_;  // sorted; small in practice
  EventId next_seq_ = 0;
};

}  // namespace april::sim
