#include "base/stats.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <stdexcept>

namespace april::base {
namespace {

template <typename T>
double interpolate(const std::vector<T>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile of an empty sample");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("quantile level outside [0, 1]");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) + frac * (static_cast<double>(sorted[hi]) - static_cast<double>(sorted[lo]));
}

}  // namespace

double quantile_sorted(const std::vector<double>& sorted, double q) { return interpolate(sorted, q); }
double quantile_sorted(const std::vector<std::int32_t>& sorted, double q) { return interpolate(sorted, q); }

double sample_quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return interpolate(values, q);
}

double median(std::vector<double> values) { return sample_quantile(std::move(values), 0.5); }

double normal_quantile(double p) { return boost::math::quantile(boost::math::normal_distribution<double>(), p); }

double student_t_quantile(double p, double dof) {
  if (!(dof >= 1)) return std::nan("");
  return boost::math::quantile(boost::math::students_t_distribution<double>(dof), p);
}

}  // namespace april::base
