#include "studies/machine_drift.hpp"

#include <algorithm>
#include <map>

#include "base/stats.hpp"

namespace april::studies {
namespace {

// Measured and median time, summed, over points whose shape was measured more than once.
struct Sums {
  double measured_s = 0, median_s = 0;
};

// Each shape's median time across `points`, for shapes measured more than once.
template <typename Point>
auto repeated_shape_medians(const std::vector<Point>& points) {
  std::map<decltype(shape_of(Point{})), double> median;
  for (const auto& [shape, v] : times_by_shape(points)) {
    if (v.size() > 1) median[shape] = base::median(v);
  }
  return median;
}

// Adds points [begin, end) of `points` to `sums`.
template <typename Point, typename Medians>
void add(Sums& sums, const std::vector<Point>& points, std::size_t begin, std::size_t end, const Medians& median) {
  for (std::size_t i = begin; i < end; ++i) {
    const auto m = median.find(shape_of(points[i]));
    if (m == median.end()) continue;
    sums.measured_s += points[i].time_s;
    sums.median_s += m->second;
  }
}

}  // namespace

std::vector<std::optional<double>> slice_slowdowns(const Profile& p) {
  const auto iteration_median = repeated_shape_medians(p.iterations);
  const auto train_median = repeated_shape_medians(p.train);
  Sums all;
  add(all, p.iterations, 0, p.iterations.size(), iteration_median);
  add(all, p.train, 0, p.train.size(), train_median);
  std::vector<std::optional<double>> out(p.slices.size());
  if (all.median_s <= 0 || all.measured_s <= 0) return out;
  const double overall = all.measured_s / all.median_s;
  std::size_t it_begin = 0, train_begin = 0;
  for (std::size_t k = 0; k < p.slices.size(); ++k) {
    const auto it_end = std::min(p.iterations.size(), static_cast<std::size_t>(std::max<std::int64_t>(0, p.slices[k].iterations_end)));
    const auto train_end = std::min(p.train.size(), static_cast<std::size_t>(std::max<std::int64_t>(0, p.slices[k].train_end)));
    Sums slice;
    add(slice, p.iterations, it_begin, it_end, iteration_median);
    add(slice, p.train, train_begin, train_end, train_median);
    if (slice.median_s > 0) out[k] = slice.measured_s / slice.median_s / overall;
    it_begin = std::max(it_begin, it_end);
    train_begin = std::max(train_begin, train_end);
  }
  return out;
}

}  // namespace april::studies
