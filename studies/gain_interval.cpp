#include "studies/gain_interval.hpp"

#include <algorithm>

#include "base/rng.hpp"
#include "base/stats.hpp"

namespace april::studies {
namespace {

// Trained tokens over step time on the given steps, as the run's summary
// has it (rl::derive); nullopt when no time passed.
std::optional<double> effective_tok_s(const std::vector<rl::StepMetrics>& steps, const std::vector<std::size_t>& indices) {
  std::vector<rl::StepMetrics> drawn;
  drawn.reserve(indices.size());
  for (const auto i : indices) drawn.push_back(steps[i]);
  const auto d = rl::derive(rl::summarize(drawn).totals);
  if (d.total_time_s <= 0) return std::nullopt;
  return d.effective_throughput_tok_s;
}

}  // namespace

std::optional<double> gain_error_pp(const std::vector<rl::StepMetrics>& live, const std::vector<rl::StepMetrics>& sim,
                                    const std::vector<rl::StepMetrics>& sync_live, const std::vector<rl::StepMetrics>& sync_sim,
                                    const std::vector<std::size_t>& indices) {
  const auto pl = effective_tok_s(live, indices), ps = effective_tok_s(sim, indices);
  const auto sl = effective_tok_s(sync_live, indices), ss = effective_tok_s(sync_sim, indices);
  if (!pl || !ps || !sl || !ss || *sl <= 0 || *ss <= 0) return std::nullopt;
  return 100.0 * (*ps / *ss - *pl / *sl);
}

std::optional<GainErrorInterval> gain_error_interval(const std::vector<rl::StepMetrics>& live, const std::vector<rl::StepMetrics>& sim,
                                                     const std::vector<rl::StepMetrics>& sync_live,
                                                     const std::vector<rl::StepMetrics>& sync_sim, std::size_t first_step,
                                                     std::uint64_t seed, std::int64_t resamples, double level) {
  const std::size_t n = live.size();
  if (sim.size() != n || sync_live.size() != n || sync_sim.size() != n || n < first_step + 2 || resamples < 1) return std::nullopt;
  const std::size_t m = n - first_step;
  base::Rng rng(seed, "validate.gain_interval");
  std::vector<double> errors;
  errors.reserve(static_cast<std::size_t>(resamples));
  std::vector<std::size_t> draw(m);
  for (std::int64_t r = 0; r < resamples; ++r) {
    for (auto& i : draw) i = first_step + static_cast<std::size_t>(rng.next_u64() % m);
    if (const auto e = gain_error_pp(live, sim, sync_live, sync_sim, draw)) errors.push_back(*e);
  }
  if (errors.empty()) return std::nullopt;
  const double tail = (1.0 - level) / 2.0;
  // Sorted once, in place: both ends come from the same order statistics.
  std::sort(errors.begin(), errors.end());
  return GainErrorInterval{base::quantile_sorted(errors, tail), base::quantile_sorted(errors, 1.0 - tail), level,
                           static_cast<std::int64_t>(errors.size())};
}

}  // namespace april::studies
