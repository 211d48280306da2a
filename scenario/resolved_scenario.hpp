#pragma once
// A scenario resolved once: what more than one part of a run derives from the
// keys (the model and accelerators, the cluster's shape, the weight sync with
// its topology file read and planned, the engines' configuration with their
// KV capacity) is computed here a single time and handed on, so that no part
// re-derives it or reads a file again.
#include <cstdint>

#include "base/config.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/engine.hpp"
#include "sim/scenario_inputs.hpp"
#include "sim/train_sync_knobs.hpp"

namespace april::scenario {

struct ResolvedScenario {
  sim::ScenarioInputs inputs;  // the model and the engines' and trainer's accelerators
  sim::ClusterShape shape;
  sim::WeightSync sync;
  sim::EngineConfig engine;
  std::int64_t kv_capacity_tok = 0;
};

// Throws base::ConfigError naming the key or file at fault. The GPU count is
// checked before the topology, whose presets build a node per GPU. `inputs`
// must be resolved from `config` (ScenarioInputs::resolved_from); without
// them, the scenario's own are resolved.
ResolvedScenario resolve_scenario(const base::Config& config, const sim::ScenarioInputs& inputs);
ResolvedScenario resolve_scenario(const base::Config& config);

}  // namespace april::scenario
