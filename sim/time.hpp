#pragma once
// Simulated time: a strong integer count of nanoseconds (ns-3 style), so that
// event ordering is exact and one seed gives bit-identical results.
#include <cmath>
#include <compare>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace april::sim {

class TimeNs {
 public:
  constexpr TimeNs() = default;
  constexpr explicit TimeNs(std::int64_t ns) : ns_(ns) {}

  // Durations and instants past int64 ns (292 years) are errors, not wrapped
  // garbage: the knobs are bounded, but steps x durations can still get there.
  static TimeNs from_s(double seconds) {
    const double ns = seconds * 1e9;
    if (!(std::fabs(ns) < 9.2e18)) throw std::overflow_error(beyond_range(seconds));
    return TimeNs(static_cast<std::int64_t>(std::llround(ns)));
  }
  [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }
  [[nodiscard]] constexpr double to_s() const { return static_cast<double>(ns_) * 1e-9; }

  constexpr TimeNs& operator+=(TimeNs o) { return *this = *this + o; }
  constexpr TimeNs& operator-=(TimeNs o) { return *this = *this - o; }
  friend constexpr TimeNs operator+(TimeNs a, TimeNs b) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a.ns_, b.ns_, &r)) throw std::overflow_error(beyond_range(a.to_s() + b.to_s()));
    return TimeNs(r);
  }
  friend constexpr TimeNs operator-(TimeNs a, TimeNs b) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a.ns_, b.ns_, &r)) throw std::overflow_error(beyond_range(a.to_s() - b.to_s()));
    return TimeNs(r);
  }
  friend constexpr auto operator<=>(TimeNs, TimeNs) = default;

 private:
  static std::string beyond_range(double seconds) {
    return "simulated time of " + std::to_string(seconds) +
           " s is past what the simulator holds (292 years in ns); shorten the scenario's durations "
           "(train.*, sync.*, engine.*) or its steps";
  }
  std::int64_t ns_ = 0;
};

}  // namespace april::sim
