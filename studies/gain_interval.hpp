#pragma once
// How far a validation's gain error could move on the run's own steps: a
// paired bootstrap over step indices. A live validation's policies take
// turns step by step, so step k of each policy ran on the same machine at
// about the same time: resampling whole step indices keeps that pairing and
// asks only how much the error depends on which steps the run happened to
// have. An interval that excludes zero is a miss of the model (or its
// calibration) that this run resolves; one much wider than the target says
// the run was too short, or the machine too noisy, to judge it.
#include <cstdint>
#include <optional>
#include <vector>

#include "rl/step_metrics.hpp"

namespace april::studies {

struct GainErrorInterval {
  double lo_pp = 0, hi_pp = 0;  // predicted minus measured gain, in points
  double level = 0.95;
  std::int64_t resamples = 0;
};

// Effective-throughput gain (trained tokens over step time) of a policy over
// sync, predicted minus measured, in points, on the steps `indices` (which
// may repeat). nullopt where a side's time or sync's tokens sum to zero.
std::optional<double> gain_error_pp(const std::vector<rl::StepMetrics>& live, const std::vector<rl::StepMetrics>& sim,
                                    const std::vector<rl::StepMetrics>& sync_live, const std::vector<rl::StepMetrics>& sync_sim,
                                    const std::vector<std::size_t>& indices);

// The central `level` interval of gain_error_pp over `resamples` draws of
// the steps from `first_step` on, with replacement, the same indices for all
// four series. nullopt with fewer than two such steps, or series of unlike
// lengths. The draws come from base::Rng(seed), so the interval is the same
// on every machine for the same run.
std::optional<GainErrorInterval> gain_error_interval(const std::vector<rl::StepMetrics>& live, const std::vector<rl::StepMetrics>& sim,
                                                     const std::vector<rl::StepMetrics>& sync_live,
                                                     const std::vector<rl::StepMetrics>& sync_sim, std::size_t first_step,
                                                     std::uint64_t seed, std::int64_t resamples = 2000, double level = 0.95);

}  // namespace april::studies
