#include "scenario/simulation.hpp"

#include <fmt/format.h>

#include <chrono>
#include <iterator>
#include <optional>

#include "base/run_keys.hpp"
#include "policies/elastic_policy.hpp"
#include "rl/loop_knobs.hpp"
#include "scenario/memory_estimate.hpp"
#include "scenario/scenario.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/sync_paths.hpp"
#include "sim/train_sync_knobs.hpp"
#include "sim/workload.hpp"
#include "traces/trace_resample.hpp"
#include "traces/trace_workload.hpp"

namespace april::scenario {

std::unique_ptr<base::WorkloadSource> make_generator(const base::Config& c) {
  return sim::shared_long_tail_generator(sim::long_tail_params(c), static_cast<std::uint64_t>(c.get(base::keys::kSeed)));
}

std::unique_ptr<adapters::SimBackend> make_sim_backend(const base::Config& c, bool record_timeline) {
  return make_sim_backend(c, resolve_scenario(c), record_timeline);
}

std::unique_ptr<adapters::SimBackend> make_sim_backend(const base::Config& c, const ResolvedScenario& resolved, bool record_timeline,
                                                       bool record_windows, const sim::ElasticSwitch* elastic) {
  adapters::SimBackendConfig bc;
  bc.engines = resolved.shape.engines;
  bc.engine = resolved.engine;
  bc.train_time_s = sim::train_time_model(c, resolved.inputs);
  bc.sync_time_s = resolved.sync.time_s;
  bc.pull_time_s = sim::relay_pull_time_s(c, resolved.inputs);
  bc.abort_latency_s = c.get(sim::keys::kEngineAbortLatencyS);
  bc.abort_per_request_s = c.get(sim::keys::kEngineAbortPerRequestUs) * 1e-6;
  bc.abort_confirm_s = c.get(sim::keys::kEngineAbortConfirmS);
  bc.engine_slowdown_beside_train = c.get(sim::keys::kEngineSlowdownBesideTrain);
  bc.train_slowdown_beside_engines = c.get(sim::keys::kTrainSlowdownBesideEngines);
  bc.train_handoff_s = c.get(sim::keys::kTrainHandoffS);
  bc.can_overlap = resolved.shape.disaggregated();
  bc.record_timeline = record_timeline;
  bc.record_windows = record_windows;
  if (elastic != nullptr) {
    bc.hybrid_engines = elastic->hybrid_engines;
    bc.hybrid_engine = elastic->engine;
    bc.hybrid_model = elastic->model;
    bc.to_rollout_s = elastic->to_rollout_s;
    bc.to_trainer_s = elastic->to_trainer_s;
  }
  return std::make_unique<adapters::SimBackend>(std::move(bc), sim::make_iteration_model(c, resolved.inputs));
}

Simulation::Simulation(const base::Config& c, const policies::PolicyRegistry& registry, const std::string& policy_name,
                       const RunOptions& options)
    : policy_name_(policy_name),
      steps_(c.get(base::keys::kSteps)),
      stop_staleness_above_(c.get(base::keys::kStopStalenessAbove)),
      on_step_(options.on_step) {
  const sim::ScenarioInputs inputs =
      options.inputs != nullptr && options.inputs->resolved_from(c) ? *options.inputs : sim::ScenarioInputs(c);
  const ResolvedScenario resolved = validate_scenario(c, inputs, options.trace ? &*options.trace : nullptr, options.trace_name);
  policy_ = registry.get(policy_name).make(c);
  // The modelled trainer gives each local step its share of the mini-batches.
  if (const std::int64_t local = policy_->train_local_steps(); local > 1 && c.get(sim::keys::kTrainTimeModel) == "phases") {
    const std::int64_t minis = c.get(sim::keys::kTrainPpoMiniBatches);
    if (minis % local != 0) {
      throw base::ConfigError(
          fmt::format("key 'async.local_steps': {} local steps per step cannot share train.ppo_mini_batches {} "
                      "equally (each local step takes its own mini-batches)",
                      local, minis));
    }
  }
  if (policy_->overlaps() && !resolved.shape.disaggregated()) {
    throw base::ConfigError(
        fmt::format("policy '{}' overlaps rollout and training, which needs separate GPUs: set "
                    "cluster.mode=disaggregated (and the split: cluster.rollout_gpus, cluster.train_gpus)",
                    policy_name));
  }
  const MemoryEstimate memory = estimate_memory(c, resolved.inputs, policy_->resident_groups_bound(c.get(base::keys::kRolloutBatchSize)),
                                                options.record_timeline, options.record_timeline && options.record_windows);
  check_memory(memory, options.memory_limit_bytes ? *options.memory_limit_bytes : base::machine_memory_bytes());
  estimated_bytes_ = memory.bytes;

  if (options.trace) {
    if (c.get(scenario::keys::kTraceMode) == "resample") {
      workload_ =
          std::make_unique<traces::TraceResample>(*options.trace, options.trace_name, static_cast<std::uint64_t>(c.get(base::keys::kSeed)));
    } else {
      workload_ = std::make_unique<traces::TraceReplay>(*options.trace, options.trace_name);
    }
  } else {
    workload_ = make_generator(c);
  }

  std::optional<sim::ElasticSwitch> elastic;
  if (policy_->lends_trainer_gpus()) {
    elastic = sim::elastic_switch(c, resolved.inputs, c.get(policies::keys::kElasticToRolloutS), c.get(policies::keys::kElasticToTrainerS));
  }
  backend_ = make_sim_backend(c, resolved, options.record_timeline, options.record_timeline && options.record_windows,
                              elastic ? &*elastic : nullptr);

  // cluster.nodes x GPUs per node when the nodes are given
  loop_ = rl::make_loop(c, *backend_, *policy_, *workload_, resolved.shape.gpus);
}

void Simulation::run_on(std::int64_t steps, std::int64_t total) {
  const auto wall0 = std::chrono::steady_clock::now();
  ran_.reserve(static_cast<std::size_t>(steps));
  while (!halted_ && static_cast<std::int64_t>(ran_.size()) < steps) {
    ran_.push_back(step());
    if (on_step_) on_step_(static_cast<std::int64_t>(ran_.size()), total);
    halted_ = stop_staleness_above_ >= 0 && ran_.back().staleness_max > stop_staleness_above_;
  }
  wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
}

RunResult Simulation::result(std::vector<rl::StepMetrics> steps) const {
  RunResult r;
  r.policy = policy_name_;
  r.steps = std::move(steps);
  r.summary = rl::summarize(r.steps);
  r.summary.fingerprint = backend_->fingerprint();
  r.summary.wall_time_s = wall_s_;
  r.events = static_cast<std::int64_t>(backend_->events_run());
  r.timeline = backend_->timeline();
  r.windows = backend_->windows();
  r.hybrid_engines = backend_->hybrid_engines();
  return r;
}

RunResult Simulation::run() {
  const std::size_t before = ran_.size();
  run_on(static_cast<std::int64_t>(before) + steps_, steps_);
  // The steps move out: a long run's are not held twice.
  std::vector<rl::StepMetrics> steps(std::make_move_iterator(ran_.begin() + static_cast<std::ptrdiff_t>(before)),
                                     std::make_move_iterator(ran_.end()));
  ran_.resize(before);
  return result(std::move(steps));
}

RunResult Simulation::run_to(std::int64_t steps) {
  run_on(steps, steps);
  return result(ran_);
}

RunResult simulate(const base::Config& config, const policies::PolicyRegistry& registry, const std::string& policy,
                   const RunOptions& options) {
  Simulation s(config, registry, policy, options);
  return s.run();
}

}  // namespace april::scenario
