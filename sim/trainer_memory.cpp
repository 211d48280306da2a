#include "sim/trainer_memory.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace april::sim {

TrainerStateBytes trainer_state_bytes(const ModelArch& model, const TrainerSetup& s) {
  const double total = static_cast<double>(model.total_params());
  TrainerStateBytes out;
  if (s.framework == TrainFramework::Fsdp) {
    const auto shard = static_cast<double>(std::max<std::int64_t>(1, s.fsdp_shard()));
    out.per_gpu = 16.0 * total / shard;
    out.how = fmt::format("16 B x {:.2f} B parameters over an FSDP shard of {:.0f} GPUs", total / 1e9, shard);
    return out;
  }
  const double local = trainer_params_per_gpu(model, s);
  const auto dp = static_cast<double>(std::max<std::int64_t>(1, s.data_parallel()));
  const double f = s.optimizer_offload_fraction;
  if (f > 0) {
    out.per_gpu = 6.0 * local + (1.0 - f) * 12.0 * local / dp;
    out.how = fmt::format(
        "{:.2f} B parameters per GPU (TP {} x PP {}, EP {} for experts) x (6 B + {:.0f}% of 12 B over DP {:.0f}; "
        "the rest in host memory)",
        local / 1e9, s.tensor_parallel, s.pipeline_parallel, s.expert_parallel, (1.0 - f) * 100.0, dp);
    return out;
  }
  out.per_gpu = 6.0 * local + 12.0 * local / dp;
  out.how = fmt::format("{:.2f} B parameters per GPU (TP {} x PP {}, EP {} for experts) x (6 B + 12 B over DP {:.0f})", local / 1e9,
                        s.tensor_parallel, s.pipeline_parallel, s.expert_parallel, dp);
  return out;
}

TrainerHostBytes trainer_host_bytes(const ModelArch& model, const TrainerSetup& s, const Accelerator& hw) {
  TrainerHostBytes out;
  const double optimizer = s.optimizer_offload_fraction * 16.0 * trainer_optimizer_params_per_gpu(model, s);
  const double offloaded = s.offload ? trainer_state_per_gpu_bytes(model, s) : 0.0;
  out.gpus_per_node = std::min<std::int64_t>(s.gpus, hw.gpus_per_node);
  out.per_node = static_cast<double>(out.gpus_per_node) * (optimizer + offloaded);
  out.how = fmt::format("{} GPUs x ({:.1f} GB of CPU optimizer state{})", out.gpus_per_node, optimizer / 1e9,
                        s.offload ? fmt::format(" + {:.1f} GB offloaded between updates", offloaded / 1e9) : std::string());
  return out;
}

std::optional<std::string> trainer_memory_shortfall(const ModelArch& model, const TrainerSetup& s, const Accelerator& hw,
                                                    const ActivationInputs& activations) {
  const auto states = trainer_state_bytes(model, s);
  if (states.per_gpu > hw.hbm_bytes) {
    return fmt::format("the trainer's model states need {:.1f} GB per GPU ({}), more than {}'s {:.1f} GB, before activations",
                       states.per_gpu / 1e9, states.how, hw.name, hw.hbm_bytes / 1e9);
  }
  const auto act = trainer_activation_bytes(model, s, activations);
  if (states.per_gpu + act.per_gpu > hw.hbm_bytes) {
    return fmt::format(
        "the trainer needs at least {:.1f} GB per GPU, more than {}'s {:.1f} GB: {:.1f} GB of model states ({}) and {:.1f} GB "
        "of activations ({}); lower train.micro_batch_tok or max_response_len, set train.fused_logits, or spread the model wider",
        (states.per_gpu + act.per_gpu) / 1e9, hw.name, hw.hbm_bytes / 1e9, states.per_gpu / 1e9, states.how, act.per_gpu / 1e9, act.how);
  }
  const auto host = trainer_host_bytes(model, s, hw);
  if (host.per_node > s.host_memory_bytes) {
    return fmt::format("the trainer needs {:.0f} GB of host memory per node ({}), more than train.host_memory_GB {:.0f}",
                       host.per_node / 1e9, host.how, s.host_memory_bytes / 1e9);
  }
  return std::nullopt;
}

}  // namespace april::sim
