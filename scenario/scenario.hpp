#pragma once
// Scenarios: the full knob schema (every module's knobs), the built-in
// scenarios, and the assembly of one simulation run from a resolved Config.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "sim/iteration_model.hpp"
#include "base/config.hpp"
#include "sim/workload.hpp"

namespace april::scenario {

// Declares every knob: run, workload, cluster, engine, train, sync, policies.
base::ConfigSchema make_schema(const policies::PolicyRegistry& registry);

struct BuiltinScenario {
  std::string name;
  std::string description;
  std::vector<std::pair<std::string, std::string>> settings;  // key, value as text
};
std::vector<BuiltinScenario> builtin_scenarios();

// Applies a built-in scenario by name, or loads a JSON file. A file may start
// from a built-in with "base": "<name>".
void apply_scenario(base::Config& config, const std::string& name_or_path);

// Checks relations between knobs that single validators cannot see. With a
// trace, the engines' KV capacity is checked against its actual longest
// request (prompt + response up to max_response_len), naming that prompt;
// without one, against the generator's prompts (4x their median) + the cap.
void validate_scenario(const base::Config& config, const std::vector<base::GroupSpec>* trace = nullptr,
                       const std::string& trace_name = "");

// Weight-sync time per step: from the topology when one is given (preset or
// file), else weight bytes over sync.bandwidth_GB_s; plus sync.latency_s.
struct WeightSync {
  double time_s = 0;
  std::string how;
};
WeightSync weight_sync(const base::Config& config);

// The engines' KV capacity in tokens, derived from GPU memory when not set.
std::int64_t kv_capacity_tok(const base::Config& config);
std::shared_ptr<const sim::IterationModel> make_iteration_model(const base::Config& config);

}  // namespace april::scenario
