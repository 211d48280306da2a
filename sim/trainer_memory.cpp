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
  const double experts = static_cast<double>(model.moe_layers() * model.routed_experts * model.expert_params());
  const double dense = total - experts;
  const auto pp = static_cast<double>(std::max<std::int64_t>(1, s.pipeline_parallel));
  const double local = dense / (static_cast<double>(s.tensor_parallel) * pp) +
                       experts / (static_cast<double>(std::max<std::int64_t>(1, s.expert_parallel)) * pp);
  const auto dp = static_cast<double>(std::max<std::int64_t>(1, s.data_parallel()));
  out.per_gpu = 6.0 * local + 12.0 * local / dp;
  out.how = fmt::format("{:.2f} B parameters per GPU (TP {} x PP {}, EP {} for experts) x (6 B + 12 B over DP {:.0f})", local / 1e9,
                        s.tensor_parallel, s.pipeline_parallel, s.expert_parallel, dp);
  return out;
}

std::optional<std::string> trainer_memory_shortfall(const ModelArch& model, const TrainerSetup& s, const Accelerator& hw) {
  const auto states = trainer_state_bytes(model, s);
  if (states.per_gpu <= hw.hbm_bytes) return std::nullopt;
  return fmt::format("the trainer's model states need {:.1f} GB per GPU ({}), more than {}'s {:.0f} GB, before activations",
                     states.per_gpu / 1e9, states.how, hw.name, hw.hbm_bytes / 1e9);
}

}  // namespace april::sim
