#pragma once
// Simulated time: a strong integer count of nanoseconds (ns-3 style), so that
// event ordering is exact and one seed gives bit-identical results.
#include <cmath>
#include <compare>
#include <cstdint>

namespace april::sim {

class TimeNs {
 public:
  constexpr TimeNs() = default;
  constexpr explicit TimeNs(std::int64_t ns) : ns_(ns) {}

  static TimeNs from_s(double seconds) { return TimeNs(static_cast<std::int64_t>(std::llround(seconds * 1e9))); }
  [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }
  [[nodiscard]] constexpr double to_s() const { return static_cast<double>(ns_) * 1e-9; }

  constexpr TimeNs& operator+=(TimeNs o) { ns_ += o.ns_; return *this; }
  constexpr TimeNs& operator-=(TimeNs o) { ns_ -= o.ns_; return *this; }
  friend constexpr TimeNs operator+(TimeNs a, TimeNs b) { return TimeNs(a.ns_ + b.ns_); }
  friend constexpr TimeNs operator-(TimeNs a, TimeNs b) { return TimeNs(a.ns_ - b.ns_); }
  friend constexpr auto operator<=>(TimeNs, TimeNs) = default;

 private:
  std::int64_t ns_ = 0;
};

}  // namespace april::sim
