#pragma once
// Per-step and whole-run metrics. Names follow docs/design.md section 3; they are
// part of the interface (summary.json keys and steps.csv columns).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rl/backend.hpp"

namespace april::rl {

struct StepMetrics {
  std::int64_t step = 0;
  double start_time_s = 0;  // clock at the start of the rollout phase
  double rollout_time_s = 0, train_time_s = 0, sync_time_s = 0;
  // Clock time the step adds to the run: from the previous step's sync end
  // (or the run's start) to this step's. Colocated: rollout + train + sync.
  double step_time_s = 0;
  // Absolute clock times (docs/design.md 3b): the batch's last group accepted, the
  // train step's start and end, the weight sync's end.
  double batch_ready_s = 0, train_start_s = 0, train_end_s = 0, sync_end_s = 0;
  // Part of rollout_time_s: from the decision to abort (the batch formed) to
  // the engines idle. Zero when nothing was in flight.
  double abort_time_s = 0;
  std::int64_t gpus = 0;                // the cluster's GPU budget, what GPU-hours are charged on
  std::int64_t tokens_generated = 0;    // decoded this rollout phase, aborted ones too
  std::int64_t batch_response_tok = 0;  // response tokens of the training batch
  std::int64_t tokens_trained = 0;      // batch tokens with non-zero weight
  std::int64_t tokens_offpolicy = 0;    // batch tokens with staleness >= 1
  std::int64_t tokens_wasted = 0;       // decoded, then dropped (restarts, filter, unbatched groups)
  std::int64_t tokens_masked = 0;       // batch tokens given zero weight in the loss (too stale)
  // Over the unfinished samples resumed this step, the tokens of their last
  // segment (docs/design.md 3: the numerator of april_offpolicy_ratio).
  std::int64_t tokens_carried = 0;
  double staleness_token_sum = 0;  // sum over batch tokens of their staleness
  std::int64_t staleness_max = 0;
  double busy_engine_s = 0, running_slot_s = 0;
  // Elastic splits: time the trainer's GPUs spent away from training, from
  // each lend's start to its reclaim's end (both switches included).
  double trainer_lent_s = 0;
  std::int64_t engines = 1, max_running = 0;
  std::int64_t buffer_groups = 0, buffer_tokens = 0;  // held at the end of the step
  std::int64_t groups_submitted = 0, groups_aborted = 0, groups_rejected = 0;
  std::int64_t samples_truncated = 0, preemptions = 0;
  std::optional<double> reward_mean, accuracy;  // live runs only: the batch's mean reward, exact-match share
  std::optional<TrainPhases> train_phases;      // simulated runs: the train step's modelled phases
};

// Derived values, shared by steps.csv rows and the summary.
struct DerivedMetrics {
  double total_time_s = 0;
  double rollout_throughput_tok_s = 0;
  double effective_throughput_tok_s = 0;
  double offpolicy_token_fraction = 0;
  double staleness_mean = 0;
  double engine_busy_fraction = 0;
  double slot_occupancy = -1;              // < 0 when engines have no running cap
  double generation_throughput_tok_s = 0;  // tokens_generated / total_time_s
  double trainer_busy_fraction = 0;        // train_time_s / total_time_s
  double trainer_lent_fraction = 0;        // trainer_lent_s / total_time_s
  double gpu_hours = 0;                    // total_time_s x gpus / 3600
  // The APRIL reference implementation's logged off_policy_ratio:
  // tokens_carried / (tokens_generated + tokens_carried). Over a run, the
  // mean over steps (RunSummary), not this ratio of the sums.
  double april_offpolicy_ratio = 0;
};

DerivedMetrics derive(const StepMetrics& m);

struct RunSummary {
  StepMetrics totals;  // sums (max for staleness_max)
  std::int64_t steps = 0;
  std::int64_t buffer_peak_groups = 0, buffer_peak_tokens = 0;
  std::int64_t tokens_buffered_at_end = 0;
  double april_offpolicy_ratio = 0;  // mean over steps of each step's ratio
  double wall_time_s = 0;            // host time the run took
  std::uint64_t fingerprint = 0;
};

RunSummary summarize(const std::vector<StepMetrics>& steps);
// summary.json and steps.csv: rl/metric_columns.hpp.

}  // namespace april::rl
