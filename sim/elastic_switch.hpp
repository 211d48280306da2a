#pragma once
// Elastic splits (verl PRs #6556, #7373): the trainer's GPUs serving as
// hybrid engines while the trainer waits for data. What they are (how many,
// on which accelerator, with what KV cache) and what a switch costs.
#include <cstdint>
#include <memory>
#include <string>

#include "base/config.hpp"
#include "sim/engine.hpp"
#include "sim/iteration_model.hpp"

namespace april::sim {

class ScenarioInputs;

struct ElasticSwitch {
  // The rollout engines' layout (cluster.tensor_parallel) on all of the
  // trainer's GPUs, on its accelerator (train.hardware).
  std::int64_t hybrid_engines = 0;
  EngineConfig engine;
  std::shared_ptr<const IterationModel> model;
  // The switch to rollout: the trainer's state (bf16 weights, fp32 Adam
  // state) to host memory, then the weights into the hybrid engines through
  // CUDA IPC as colocated slime and verl hand them over
  // (sim/sync_paths.hpp), + sync.latency_s. The switch back: the abort's
  // latency (engine.abort_latency_s), then the state back from host memory;
  // the engines' sleep frees memory and moves nothing (vLLM sleep level 2,
  // as PR #7373 uses).
  double to_rollout_s = 0, to_trainer_s = 0;
  std::string how;
};

// On a disaggregated cluster. A switch time >= 0 replaces the modelled one.
// Throws base::ConfigError where no engine fits on the trainer's GPUs.
// `inputs`: the model and accelerators (sim/scenario_inputs.hpp).
ElasticSwitch elastic_switch(const base::Config& config, const ScenarioInputs& inputs, double to_rollout_s_given,
                             double to_trainer_s_given);

}  // namespace april::sim
