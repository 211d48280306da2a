#pragma once
// One simulation run assembled from a resolved scenario: workload, modeled
// engines (adapters::SimBackend), policy and RL loop. Everything is owned here, so any
// number of simulations can run in one process.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/sim/sim_backend.hpp"
#include "rl/rl_loop.hpp"
#include "rl/step_metrics.hpp"
#include "scenario/scenario.hpp"
#include "sim/elastic_switch.hpp"
#include "sim/scenario_inputs.hpp"

namespace april::scenario {

struct RunOptions {
  std::optional<std::vector<base::GroupSpec>> trace;  // replay instead of the generator
  std::string trace_name;
  bool record_timeline = false;  // engine occupancy changes, in RunResult::timeline
  bool record_windows = false;   // engine windows too, in RunResult::windows (with record_timeline)
  // A run whose memory estimate exceeds this is refused before it starts;
  // unset: this machine's memory (scenario/memory_estimate.hpp).
  std::optional<std::uint64_t> memory_limit_bytes;
  // Called after each step with the steps done and the run's total (a
  // progress line); unset: nothing.
  std::function<void(std::int64_t done, std::int64_t total)> on_step;
  // The model and accelerators already resolved (ResolvedScenario::inputs),
  // used where the config names the same ones (policies and splits change
  // other keys), so that a command's runs read their files once; unset, or
  // naming others: the run resolves its own.
  const sim::ScenarioInputs* inputs = nullptr;
};

struct RunResult {
  std::string policy;
  std::vector<rl::StepMetrics> steps;
  rl::RunSummary summary;
  std::int64_t events = 0;
  std::vector<adapters::TimelinePoint> timeline;
  std::vector<rl::EngineWindowSpan> windows;
  // Engines on the trainer's GPUs (elastic splits), numbered after the
  // rollout engines in the timeline and windows.
  std::int64_t hybrid_engines = 0;
};

class Simulation {
 public:
  Simulation(const base::Config& config, const policies::PolicyRegistry& registry, const std::string& policy,
             const RunOptions& options = {});
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  rl::StepMetrics step() { return loop_->run_step(); }
  // Runs the scenario's `steps` steps.
  RunResult run();
  // Runs on until `steps` steps are recorded in all (or the staleness stop
  // ends the run) and returns every step recorded so far. Nothing simulated
  // depends on how many steps follow (`steps` only says where run() stops),
  // so a run continued so is the longer run, step for step.
  RunResult run_to(std::int64_t steps);
  [[nodiscard]] std::size_t recorded_steps() const { return ran_.size(); }
  // What this run was estimated to hold in memory when it was built.
  [[nodiscard]] double estimated_bytes() const { return estimated_bytes_; }

  [[nodiscard]] rl::RlLoop& loop() { return *loop_; }
  [[nodiscard]] adapters::SimBackend& backend() { return *backend_; }
  [[nodiscard]] const policies::Policy& policy() const { return *policy_; }

 private:
  std::string policy_name_;
  std::int64_t steps_ = 0;
  std::int64_t stop_staleness_above_ = -1;  // stop_after_staleness_above
  std::function<void(std::int64_t, std::int64_t)> on_step_;
  double estimated_bytes_ = 0;
  std::vector<rl::StepMetrics> ran_;  // the steps run_to() recorded
  bool halted_ = false;               // the staleness stop ended the run
  double wall_s_ = 0;                 // run_to()'s time so far
  void run_on(std::int64_t steps, std::int64_t total);
  RunResult result(std::vector<rl::StepMetrics> steps) const;
  std::unique_ptr<policies::Policy> policy_;
  std::unique_ptr<base::WorkloadSource> workload_;
  std::unique_ptr<adapters::SimBackend> backend_;
  std::unique_ptr<rl::RlLoop> loop_;
};

// The modeled engines, train and sync costs of a scenario, from its resolved
// form (the model and accelerators in `resolved.inputs`); the first resolves
// the scenario itself. With `elastic`, hybrid engines on the trainer's GPUs
// too (a policy that lends them).
std::unique_ptr<adapters::SimBackend> make_sim_backend(const base::Config& config, bool record_timeline = false);
std::unique_ptr<adapters::SimBackend> make_sim_backend(const base::Config& config, const ResolvedScenario& resolved, bool record_timeline,
                                                       bool record_windows = false, const sim::ElasticSwitch* elastic = nullptr);

// The scenario's long-tail workload generator (workload.* keys, seed).
std::unique_ptr<base::WorkloadSource> make_generator(const base::Config& config);

// One full simulation of `policy` on the scenario in `config`.
RunResult simulate(const base::Config& config, const policies::PolicyRegistry& registry, const std::string& policy,
                   const RunOptions& options = {});

}  // namespace april::scenario
