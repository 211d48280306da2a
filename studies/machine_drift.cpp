#include "studies/machine_drift.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/stats.hpp"

namespace april::studies {
namespace {

using Shape = std::tuple<int, double, double, double, double>;  // kind (0 iteration, 1 train), then the kind's shape

Shape iteration_shape(const IterationPoint& it) { return {0, it.batch, it.prefill_requests, it.prefill_tok, it.prefill_longest_tok}; }
Shape train_shape(const TrainPoint& t) { return {1, t.samples, t.tokens, t.longest_tok, 0.0}; }

}  // namespace

std::vector<std::optional<double>> slice_slowdowns(const Profile& p) {
  std::map<Shape, std::vector<double>> times;
  for (const auto& it : p.iterations) times[iteration_shape(it)].push_back(it.time_s);
  for (const auto& t : p.train) times[train_shape(t)].push_back(t.time_s);
  std::map<Shape, double> median;
  for (const auto& [shape, v] : times) {
    if (v.size() > 1) median[shape] = base::median(v);
  }
  // Measured and median time, summed, over a slice's points of repeated shapes.
  struct Sums {
    double measured_s = 0, median_s = 0;
  };
  const auto add = [&median](Sums& s, const Shape& shape, double time_s) {
    const auto m = median.find(shape);
    if (m == median.end()) return;
    s.measured_s += time_s;
    s.median_s += m->second;
  };
  Sums all;
  std::vector<Sums> per_slice(p.slices.size());
  std::size_t it_begin = 0, train_begin = 0;
  for (std::size_t k = 0; k < p.slices.size(); ++k) {
    const auto it_end = std::min(p.iterations.size(), static_cast<std::size_t>(std::max<std::int64_t>(0, p.slices[k].iterations_end)));
    const auto train_end = std::min(p.train.size(), static_cast<std::size_t>(std::max<std::int64_t>(0, p.slices[k].train_end)));
    for (std::size_t i = it_begin; i < it_end; ++i) add(per_slice[k], iteration_shape(p.iterations[i]), p.iterations[i].time_s);
    for (std::size_t i = train_begin; i < train_end; ++i) add(per_slice[k], train_shape(p.train[i]), p.train[i].time_s);
    it_begin = std::max(it_begin, it_end);
    train_begin = std::max(train_begin, train_end);
  }
  for (const auto& it : p.iterations) add(all, iteration_shape(it), it.time_s);
  for (const auto& t : p.train) add(all, train_shape(t), t.time_s);
  std::vector<std::optional<double>> out(p.slices.size());
  if (all.median_s <= 0 || all.measured_s <= 0) return out;
  const double overall = all.measured_s / all.median_s;
  for (std::size_t k = 0; k < p.slices.size(); ++k) {
    if (per_slice[k].median_s > 0) out[k] = per_slice[k].measured_s / per_slice[k].median_s / overall;
  }
  return out;
}

}  // namespace april::studies
