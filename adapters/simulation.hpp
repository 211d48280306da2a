#pragma once
// One simulation run assembled from a resolved scenario: workload, modeled
// engines (SimBackend), policy and RL loop. Everything is owned here, so any
// number of simulations can run in one process.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/rl_loop.hpp"
#include "adapters/scenario.hpp"
#include "adapters/sim_backend.hpp"
#include "adapters/step_metrics.hpp"

namespace april::adapters {

struct RunOptions {
  std::optional<std::vector<sim::GroupSpec>> trace;  // replay instead of the generator
  std::string trace_name;
  bool record_timeline = false;  // engine occupancy changes, in RunResult::timeline
};

struct RunResult {
  std::string policy;
  std::vector<StepMetrics> steps;
  RunSummary summary;
  std::int64_t events = 0;
  std::vector<TimelinePoint> timeline;
};

class Simulation {
 public:
  Simulation(const sim::Config& config, const policies::PolicyRegistry& registry, const std::string& policy,
             const RunOptions& options = {});
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  StepMetrics step() { return loop_->run_step(); }
  // Runs the scenario's `steps` steps.
  RunResult run();

  [[nodiscard]] RlLoop& loop() { return *loop_; }
  [[nodiscard]] SimBackend& backend() { return *backend_; }

 private:
  std::string policy_name_;
  std::int64_t steps_ = 0;
  std::unique_ptr<policies::Policy> policy_;
  std::unique_ptr<sim::WorkloadSource> workload_;
  std::unique_ptr<SimBackend> backend_;
  std::unique_ptr<RlLoop> loop_;
};

// The modeled engines, train and sync costs of a scenario.
std::unique_ptr<SimBackend> make_sim_backend(const sim::Config& config, bool record_timeline = false);

// The scenario's long-tail workload generator (workload.* keys, seed).
std::unique_ptr<sim::WorkloadSource> make_generator(const sim::Config& config);

// One full simulation of `policy` on the scenario in `config`.
RunResult simulate(const sim::Config& config, const policies::PolicyRegistry& registry, const std::string& policy,
                   const RunOptions& options = {});

}  // namespace april::adapters
