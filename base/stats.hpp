#pragma once
// The statistics every layer shares: one sample quantile (linear
// interpolation between order statistics, Hyndman-Fan type 7, as numpy's
// default), the median, and the normal and Student-t quantiles from
// Boost.Math.
#include <cstdint>
#include <vector>

namespace april::base {

// q in [0, 1] over values already sorted ascending; throws on an empty sample.
double quantile_sorted(const std::vector<double>& sorted, double q);
double quantile_sorted(const std::vector<std::int32_t>& sorted, double q);
// Sorts a copy; an empty sample gives 0.
double sample_quantile(std::vector<double> values, double q);
double median(std::vector<double> values);

// Inverse CDF of the standard normal distribution, p in (0, 1).
double normal_quantile(double p);
// Inverse CDF of Student's t with `dof` degrees of freedom (NaN when dof < 1).
double student_t_quantile(double p, double dof);

}  // namespace april::base
