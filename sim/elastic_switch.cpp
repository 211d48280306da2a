#include "sim/elastic_switch.hpp"

#include <fmt/format.h>

#include "sim/cluster_shape.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/engine_memory.hpp"
#include "sim/scenario_inputs.hpp"
#include "sim/sync_paths.hpp"
#include "sim/train_phases.hpp"
#include "sim/train_sync_knobs.hpp"

namespace april::sim {

ElasticSwitch elastic_switch(const base::Config& c, const ScenarioInputs& in, double to_rollout_s_given, double to_trainer_s_given) {
  const ClusterShape shape = cluster_shape(c, in);
  if (!shape.disaggregated()) {
    throw base::ConfigError("elastic splits lend the trainer's GPUs of a disaggregated cluster: set cluster.mode=disaggregated");
  }
  const Accelerator hw = trainer_accelerator(c, in);
  const ModelArch& model = in.model();
  const EngineLayout layout = engine_layout(c);
  ElasticSwitch s;
  s.hybrid_engines = shape.train_gpus / layout.tensor_parallel;
  if (s.hybrid_engines < 1) {
    throw base::ConfigError(fmt::format("elastic: the trainer's {} GPUs hold no engine of cluster.tensor_parallel {}", shape.train_gpus,
                                        layout.tensor_parallel));
  }
  // The engines' keys on the trainer's accelerator.
  const ScenarioInputs on_trainer = in.with_engine_hw(hw);
  try {
    s.engine = engine_config(c, on_trainer);
  } catch (const base::ConfigError& e) {
    throw base::ConfigError(fmt::format("elastic: an engine on the trainer's GPUs: {}", e.what()));
  }
  s.model = make_iteration_model(c, on_trainer);

  const TrainerSetup setup = trainer_setup(c, in);
  // Its state per GPU needs a layout that divides the trainer's GPUs (the
  // train-time models that do not read the layout never checked it).
  check_trainer_setup(setup, model, hw);
  const double state_bytes = trainer_state_per_gpu_bytes(model, setup);
  const double host_bytes_s = hw.host_link_bytes_s * setup.host_link_efficiency;
  const double state_s = state_bytes / host_bytes_s;
  const std::int64_t trainer_nodes = (shape.train_gpus + shape.gpus_per_node - 1) / shape.gpus_per_node;
  const WeightSync load = ipc_weight_load(c, model, hw, trainer_nodes > 1, layout.tensor_parallel, c.get(keys::kSyncLatencyS));
  s.to_rollout_s = to_rollout_s_given >= 0 ? to_rollout_s_given : state_s + load.time_s;
  s.to_trainer_s = to_trainer_s_given >= 0 ? to_trainer_s_given : c.get(keys::kEngineAbortLatencyS) + state_s;
  s.how = fmt::format(
      "{} hybrid engines of TP {} on {}; trainer state {:.2f} GB per GPU over the host link at {:.1f} GB/s = {:.3f} s each way; "
      "weights in: {}, + {} s; to rollout {:.3f} s{}, to trainer {:.3f} s{}",
      s.hybrid_engines, layout.tensor_parallel, hw.name, state_bytes / 1e9, host_bytes_s / 1e9, state_s, load.how,
      c.get(keys::kSyncLatencyS), s.to_rollout_s, to_rollout_s_given >= 0 ? " (given)" : "", s.to_trainer_s,
      to_trainer_s_given >= 0 ? " (given)" : "");
  return s;
}

}  // namespace april::sim
