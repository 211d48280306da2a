#pragma once
// Scenarios: the full knob schema (every module's knobs), the built-in
// scenarios, and the assembly of one simulation run from a resolved Config.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/sim_backend.hpp"
#include "adapters/step_metrics.hpp"
#include "policies/registry.hpp"
#include "sim/config.hpp"
#include "sim/workload.hpp"

namespace april::adapters {

// Declares every knob: run, workload, cluster, engine, train, sync, policies.
sim::ConfigSchema make_schema(const policies::PolicyRegistry& registry);

struct BuiltinScenario {
  std::string name;
  std::string description;
  std::vector<std::pair<std::string, std::string>> settings;  // key, value as text
};
std::vector<BuiltinScenario> builtin_scenarios();

// Applies a built-in scenario by name, or loads a JSON file. A file may start
// from a built-in with "base": "<name>".
void apply_scenario(sim::Config& config, const std::string& name_or_path);

// Checks relations between knobs that single validators cannot see.
void validate_scenario(const sim::Config& config);

struct RunResult {
  std::string policy;
  std::vector<StepMetrics> steps;
  RunSummary summary;
  std::int64_t events = 0;
};

struct RunOptions {
  std::optional<std::vector<sim::GroupSpec>> trace;  // replay instead of the generator
  std::string trace_name;
};

// One full simulation of `policy` on the scenario in `config`.
RunResult simulate(const sim::Config& config, const policies::PolicyRegistry& registry, const std::string& policy,
                   const RunOptions& options = {});

// The engines' KV capacity in tokens, derived from GPU memory when not set.
std::int64_t kv_capacity_tok(const sim::Config& config);
std::shared_ptr<const sim::IterationModel> make_iteration_model(const sim::Config& config);

}  // namespace april::adapters
