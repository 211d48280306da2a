#pragma once
// Scenarios: the full knob schema (each module declares its own keys beside
// the code that reads them; this gathers them), the built-in scenarios, and
// checks across keys.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "policies/registry.hpp"
#include "scenario/resolved_scenario.hpp"
#include "sim/iteration_model.hpp"
#include "sim/workload.hpp"

namespace april::scenario {

// Every key: run, loop, workload, cluster and engine, train and sync, live, policies.
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
// A scenario's JSON text, already read (`where` names it in errors), with its
// "base" applied first as a file's is.
void apply_scenario_text(base::Config& config, const std::string& text, const std::string& where);

// Checks relations between knobs that single validators cannot see. With a
// trace, the engines' KV capacity is checked against its actual longest
// request (prompt + response up to max_response_len), naming that prompt;
// without one, against the generator's prompts (4x their median) + the cap.
// Returns the scenario resolved (resolve_scenario), for the run to use; with
// `inputs` (resolved from `config`), on those.
ResolvedScenario validate_scenario(const base::Config& config, const std::vector<base::GroupSpec>* trace = nullptr,
                                   const std::string& trace_name = "");
ResolvedScenario validate_scenario(const base::Config& config, const sim::ScenarioInputs& inputs,
                                   const std::vector<base::GroupSpec>* trace = nullptr, const std::string& trace_name = "");

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::StringKey kTraceMode{"trace.mode"};
}  // namespace keys

}  // namespace april::scenario
