#pragma once
// `april validate`: each policy runs live, then in the simulator calibrated to
// the live engine, on the live run's own sample lengths (its trace), with the
// same seed and settings; the report compares them per step and in total.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/live/live_backend.hpp"
#include "adapters/live/profiler.hpp"
#include "base/config.hpp"
#include "base/workload_source.hpp"
#include "policies/registry.hpp"
#include "rl/step_metrics.hpp"
#include "studies/calibration.hpp"
#include "studies/gain_interval.hpp"

namespace april::studies {

struct PolicyValidation {
  std::string policy;
  std::vector<rl::StepMetrics> live, sim;
  std::vector<base::GroupSpec> trace;                                 // the live run's complete groups, a what-if input
  std::vector<std::vector<studies::IterationPoint>> live_iterations;  // per step: the live engine's iterations
  // Both engines' occupancy at every change and their windows (each live
  // iteration; the twin's prefill and decode windows), on each run's clock:
  // the engine tracks of validate's timeline.
  std::vector<rl::EngineRunningChange> live_engine_changes, sim_engine_changes;
  std::vector<rl::EngineWindowSpan> live_engine_windows, sim_engine_windows;
  bool overlapped = false;                 // trains beside the engine: its steps are compared on step time, the twin is disaggregated
  std::vector<double> step_rollout_error;  // |sim - live| / live, per step that took rollout time (step time when overlapped)
  std::int64_t instant_steps = 0;          // batch complete in the buffer: no rollout time live
  std::int64_t instant_agree = 0;          // ... and none predicted either
  double median_error = 0, p90_error = 0, total_time_error = 0;
  // Interleaved profile only: the median error with the twin's step times
  // multiplied by the machine's slowdown at that step
  // (ValidationReport::machine_slowdown_by_step): what is left when the
  // machine's drift over the run, which no fixed model can predict, is
  // taken out by a measurement independent of the live steps.
  std::optional<double> median_error_drift_adjusted;
  double live_rollout_tok_s = 0, sim_rollout_tok_s = 0;
  double live_effective_tok_s = 0, sim_effective_tok_s = 0;                 // trained tokens over total time
  std::optional<double> effective_gain_measured, effective_gain_predicted;  // over sync's
  // Predicted minus measured effective gain: its 95% interval over the run's
  // own steps after the warm-up (studies/gain_interval.hpp).
  std::optional<studies::GainErrorInterval> effective_gain_error_interval;
  // Overlapped runs, after the warm-up: live iteration time over the
  // calibration's prediction, for iterations run while a train step computed
  // beside the engine and for the others: how much the trainer slows the
  // engine, as the live run saw it. The median is the typical iteration; the
  // sum ratio (their total time over the model's total) is what compares with
  // the profiled engine.slowdown_beside_train, itself a ratio of totals that
  // the twin applies to every iteration beside a train step: the few slow
  // iterations that the median ignores are in it.
  std::optional<double> iteration_ratio_beside_train, iteration_ratio_alone;
  std::optional<double> iteration_sum_ratio_beside_train, iteration_sum_ratio_alone;
  // Per step: the live train steps that computed during it, timed on the
  // thread that ran them.
  std::vector<std::vector<live::LiveTrainStep>> live_train_steps;
  // After the warm-up, median: live train step compute time over the
  // calibration's prediction for it, the profiled slowdown applied to the
  // part the engine ran beside it (the twin's model); and, for steps the
  // engine ran beside for at least half their time, the slowdown that
  // step's time implies (the engine's time beside it at s times the alone
  // model's speed, the rest at its speed). Sync's ratio against an
  // overlapped policy's says whether the profiled slowdown fits this run.
  std::optional<double> train_ratio, train_slowdown_implied;
  double train_beside_engine_share = 0;  // of the overlapped steps' compute time, the engine's part
  // Steps whose rollout decoded as many tokens in the simulator as live: on
  // the live run's own lengths the twin replays the live schedule, so these
  // differ only where a policy's decisions depend on time.
  std::int64_t steps_same_tokens = 0;
  // The warm-up steps (left out of the errors and gains above): live step
  // time over the twin's, per step. What the first steps cost live beyond
  // the model (first allocations of the engine, the trainer and its
  // optimizer state) does not recur, and a run of thousands of steps never sees it.
  std::vector<double> warmup_live_over_sim;
};

// Rollout phases shorter than this took no iteration (the batch was in the buffer).
inline constexpr double kInstantS = 0.01;

struct ValidationReport {
  std::vector<PolicyValidation> policies;
  Calibration calibration;                  // the one the simulator used
  bool profiled_interleaved = false;        // fitted to a profile taken in slices between the live steps
  std::optional<studies::Profile> profile;  // that profile (interleaved runs only), to keep beside the report
  // Interleaved runs only, per step: how much slower than on average the
  // machine ran then, by the profile's slices just before and after the
  // step's round of policies (studies::slice_slowdowns); nullopt where
  // neither slice measured a repeated shape.
  std::vector<std::optional<double>> machine_slowdown_by_step;
  std::optional<double> gain_measured, gain_predicted;  // first policy over sync, rollout throughput
  std::int64_t warmup_steps = 0;                        // leading steps left out of the errors and gains
  [[nodiscard]] nlohmann::json to_json() const;
};

// The simulator scenario that mirrors the live engine: one engine of
// live.slots, the calibrated linear iteration, train and sync models.
// With `overlapped`, a disaggregated cluster: the engine on one GPU, the trainer on another.
base::Config simulator_twin(const base::Config& scenario, const Calibration& calibration, bool overlapped = false);

// What validate() is doing, and the share of its live steps done (0 before
// the first): a progress line with an estimate of the time left.
using ValidationProgress = std::function<void(const std::string& what, double live_share_done)>;

// With a calibration, the simulator uses it. Without, the live engine is
// profiled in slices between the live steps (`profile.repeats` passes in
// all) and the fit to that profile is used: both then see the same machine.
// The first `warmup_steps` steps run on both sides but are left out of the
// errors and gains (their live/twin ratio is reported apart).
ValidationReport validate(const base::Config& scenario, const policies::PolicyRegistry& registry, const std::vector<std::string>& policies,
                          const std::optional<Calibration>& calibration, const live::ProfileOptions& profile, const std::string& device,
                          const ValidationProgress& progress = {}, std::int64_t warmup_steps = 0);

// A live sample still running when the run stopped: its length is unknown.
inline constexpr std::int32_t kUnfinishedSample = -1;

enum class LiveTraceUse {
  kTwin,    // every group the live run drew, in order; an unfinished sample (or a
            // group never seen) runs to `cap`, as it was still running live
  kWhatIf,  // only groups whose samples all finished: lengths that are all known
};

// A live run's groups from the length of each sample per drawn group (by
// draw index), named by their prompts (draw i samples prompt i, or
// i mod `dataset_prompts` when the task cycles through a dataset).
std::vector<base::GroupSpec> live_trace(const std::map<std::int64_t, std::vector<std::int32_t>>& lengths, std::int64_t groups,
                                        std::int64_t samples_per_group, std::int32_t cap, LiveTraceUse use,
                                        std::int64_t dataset_prompts = 0);

}  // namespace april::studies
