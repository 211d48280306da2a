#include "sim/simulator.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace april::sim {

EventId Simulator::schedule_at(TimeNs when, std::uint32_t tag, std::function<void()> action, PrefetchHint hint) {
  if (when < now_) {
    throw std::logic_error(fmt::format("event scheduled in the past: at {} ns, now {} ns", when.ns(), now_.ns()));
  }
  return queue_.push(when, tag, std::move(action), hint);
}

EventId Simulator::schedule_in(TimeNs delay, std::uint32_t tag, std::function<void()> action) {
  return schedule_at(now_ + delay, tag, std::move(action));
}

void Simulator::mix(std::uint64_t v) { fingerprint_.add_u64(v); }

bool Simulator::step() {
  if (queue_.empty()) return false;
  Event e = queue_.pop();
  if (e.time < now_) throw std::logic_error("simulated time went backwards");
  now_ = e.time;
  mix(static_cast<std::uint64_t>(e.time.ns()));
  mix(e.tag);
  ++events_run_;
  queue_.prefetch_next();  // the next event's first reads, while this one runs
  e.action();
  return true;
}

void Simulator::run_until(TimeNs t) {
  while (!queue_.empty() && queue_.next_time() <= t) step();
  advance_to(t);
}

void Simulator::advance_to(TimeNs t) {
  if (t < now_) throw std::logic_error("simulated time went backwards");
  if (!queue_.empty() && queue_.next_time() < t) throw std::logic_error("advance_to would skip pending events");
  now_ = t;
}

}  // namespace april::sim
