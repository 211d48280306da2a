#include "scenario/scenario.hpp"

#include "base/bounded_read.hpp"
#include "base/json_value.hpp"
#include "base/run_keys.hpp"

#include <fmt/format.h>

#include <filesystem>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "adapters/live/live_config.hpp"
#include "rl/loop_knobs.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/framework_profiles.hpp"
#include "sim/topology.hpp"
#include "sim/train_sync_knobs.hpp"
#include "sim/workload.hpp"

namespace april::scenario {

using base::Knob;
using base::KnobType;

base::ConfigSchema make_schema(const policies::PolicyRegistry& registry) {
  // Each module declares the keys it reads, beside the code that reads them.
  base::ConfigSchema s;
  s.add({base::keys::kSeed.name, KnobType::Int, std::int64_t{1}, "", "seed of every random stream (workload)", base::at_least(0)});
  s.add({base::keys::kSteps.name, KnobType::Int, std::int64_t{50}, "steps", "training steps to simulate", base::in_range(1, 10'000'000)});
  // A search's screening (april plan's race) learns all it needs of a plan
  // that breaks its staleness bound at the first step that does.
  s.add({base::keys::kStopStalenessAbove.name, KnobType::Int, std::int64_t{-1}, "versions",
         "end the run after the first step whose staleness_max exceeds this (-1: run every step)", base::in_range(-1, 1'000'000)});
  s.add({keys::kTraceMode.name, KnobType::String, std::string("replay"), "",
         "with --trace: replay groups in file order (wrapping), or resample whole groups with the seed",
         base::one_of({"replay", "resample"})});
  rl::declare_loop_knobs(s);
  sim::declare_workload_knobs(s);
  sim::declare_engine_knobs(s);
  sim::declare_cluster_mode_knobs(s);
  sim::declare_train_sync_knobs(s);
  live::declare_live_knobs(s);
  registry.declare_knobs(s);
  sim::declare_framework_profiles(s);  // last: a profile sets other keys
  return s;
}

std::vector<BuiltinScenario> builtin_scenarios() {
  return {
      {"default", "APRIL paper setting: Qwen3-4B on 8 H100 colocated, 4 engines at TP 2, B = 32, n = 8, alpha 2, max response 16384", {}},
      {"handcheck",
       "one engine, 1 ms per iteration, no running cap, zero prefill, train, sync and abort time: results checkable by hand",
       {{"cluster.gpus", "1"},
        {"cluster.engines", "1"},
        {"cluster.tensor_parallel", "1"},
        {"engine.iteration_model", "constant"},
        {"engine.constant_iteration_us", "1000"},
        {"engine.max_running", "0"},
        {"engine.kv_capacity_tok", "1000000000"},
        {"engine.abort_latency_s", "0"},
        {"engine.abort_per_request_us", "0"},
        {"train.time_model", "zero"},
        {"sync.time_model", "zero"},
        {"rollout_batch_size", "4"},
        {"n_samples_per_prompt", "2"},
        {"max_response_len", "100"},
        {"workload.prompt_median_tok", "16"},
        {"workload.response_median_tok", "20"},
        {"steps", "5"}}},
      {"live-cpu",
       "april live on CPU: the countdown task, a ~10M-parameter model warm-started for 8 steps, B = 8 prompts x n = 8, "
       "alpha 2, 30 steps",
       {{"rollout_batch_size", "8"},
        {"n_samples_per_prompt", "8"},
        {"max_response_len", "48"},
        {"april.alpha", "2"},
        {"steps", "30"},
        {"live.sft_steps", "8"},
        {"live.model", "small"},
        {"live.slots", "128"}}},
  };
}

void apply_scenario(base::Config& config, const std::string& name_or_path) {
  for (const auto& b : builtin_scenarios()) {
    if (b.name != name_or_path) continue;
    for (const auto& [k, v] : b.settings) config.set_from_text(k, v, "scenario " + b.name);
    return;
  }
  std::error_code ec;
  if (!std::filesystem::exists(name_or_path, ec)) {
    std::vector<std::string> names;
    for (const auto& b : builtin_scenarios()) names.push_back(b.name);
    throw base::ConfigError(
        fmt::format("{}: no such scenario file, and not a built-in scenario ({})", name_or_path, fmt::join(names, ", ")));
  }
  apply_scenario_text(config, base::read_file_bounded(name_or_path, base::kSmallJsonMaxBytes, "scenario"), name_or_path);
}

void apply_scenario_text(base::Config& config, const std::string& text, const std::string& where) {
  // "base" names a built-in scenario to start from; read it before the rest.
  // A text that does not parse is reported, with its line, by load_config_text.
  if (nlohmann::json doc; !base::parse_json(text, doc) && doc.is_object() && doc.contains("base")) {
    const auto& base = doc["base"];
    bool known = false;
    for (const auto& b : builtin_scenarios()) known = known || (base.is_string() && b.name == base.get<std::string>());
    if (!known) throw base::ConfigError(fmt::format("{}: key 'base': {} is not a built-in scenario", where, base.dump()));
    apply_scenario(config, base.get<std::string>());
  }
  base::load_config_text(config, text, where);
}

ResolvedScenario validate_scenario(const base::Config& c, const std::vector<base::GroupSpec>* trace, const std::string& trace_name) {
  return validate_scenario(c, sim::ScenarioInputs(c), trace, trace_name);
}

ResolvedScenario validate_scenario(const base::Config& c, const sim::ScenarioInputs& inputs, const std::vector<base::GroupSpec>* trace,
                                   const std::string& trace_name) {
  // A group of one sample is always all right or all wrong: the filter would
  // reject every group and the rollout would refill forever.
  if (c.get(base::keys::kDynamicSampling) && c.get(base::keys::kSamplesPerPrompt) < 2) {
    throw base::ConfigError(
        fmt::format("filter.dynamic_sampling rejects groups whose samples all agree, which a group of "
                    "n_samples_per_prompt = {} always does; no batch could fill. Set n_samples_per_prompt "
                    ">= 2 or turn the filter off",
                    c.get(base::keys::kSamplesPerPrompt)));
  }
  const ResolvedScenario resolved = resolve_scenario(c, inputs);
  const std::int64_t kv = resolved.kv_capacity_tok;
  const std::int64_t cap = c.get(base::keys::kMaxResponseLen);
  if (trace != nullptr) {
    // Every request must fit one engine on its own at its longest.
    const base::GroupSpec* worst = nullptr;
    std::int64_t longest = 0;
    for (const auto& g : *trace) {
      std::int64_t response = 0;
      for (auto t : g.response_tok) response = std::max<std::int64_t>(response, std::min<std::int64_t>(t, cap));
      if (g.prompt_tok + response > longest) {
        longest = g.prompt_tok + response;
        worst = &g;
      }
    }
    if (worst != nullptr && longest > kv) {
      throw base::ConfigError(fmt::format(
          "{}: prompt '{}' needs {} KV tokens ({} prompt + {} response, capped by max_response_len), more than the engine "
          "KV capacity of {} tokens; raise engine.kv_capacity_tok or lower max_response_len",
          trace_name.empty() ? "trace" : trace_name, worst->prompt_id, longest, worst->prompt_tok, longest - worst->prompt_tok, kv));
    }
    return resolved;
  }
  const double longest = c.get(sim::keys::kWorkloadPromptMedianTok) * 4 + static_cast<double>(cap);
  if (static_cast<double>(kv) < longest) {
    throw base::ConfigError(
        fmt::format("engine KV capacity of {} tokens cannot hold one long request (~{:.0f} tokens: 4x "
                    "workload.prompt_median_tok + max_response_len); raise engine.kv_capacity_tok or lower "
                    "max_response_len",
                    kv, longest));
  }
  return resolved;
}

}  // namespace april::scenario
