#pragma once
// The discrete-event loop: a clock, an event queue and a fingerprint of the
// event sequence (OMNeT++ style) that tests pin to catch nondeterminism.
// One Simulator per run; nothing here is global.
#include <cstdint>
#include <functional>

#include "base/hash.hpp"
#include "sim/event_queue.hpp"
#include "sim/time.hpp"

namespace april::sim {

class Simulator {
 public:
  [[nodiscard]] TimeNs now() const { return now_; }
  EventId schedule_at(TimeNs when, std::uint32_t tag, std::function<void()> action, PrefetchHint hint = {});
  EventId schedule_in(TimeNs delay, std::uint32_t tag, std::function<void()> action);
  void cancel(EventId id) { queue_.cancel(id); }

  [[nodiscard]] bool has_pending() { return !queue_.empty(); }
  [[nodiscard]] TimeNs next_event_time() { return queue_.next_time(); }
  // Runs the earliest pending event; returns false when none is left.
  bool step();
  // Runs every event with time <= t, then sets the clock to t.
  void run_until(TimeNs t);
  // Moves the clock forward with no event in between (e.g. a training phase).
  void advance_to(TimeNs t);

  [[nodiscard]] std::uint64_t fingerprint() const { return fingerprint_.value(); }
  [[nodiscard]] std::uint64_t events_run() const { return events_run_; }

 private:
  void mix(std::uint64_t v);

  EventQueue queue_;
  TimeNs now_{0};
  base::Fnv1a fingerprint_;  // over (time, tag) of every event run
  std::uint64_t events_run_ = 0;
};

}  // namespace april::sim
