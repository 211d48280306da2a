#include "sim/cost_model.hpp"

namespace april::sim {

double train_time_s(const ModelArch& model, const Accelerator& hw, const TrainCostParams& p, std::int64_t tokens) {
  const double flops = 6.0 * static_cast<double>(model.active_params()) * static_cast<double>(tokens);
  return p.fixed_s + flops / (p.mfu * hw.bf16_flop_s * static_cast<double>(p.gpus));
}

double sync_time_s(const ModelArch& model, const SyncCostParams& p) {
  return p.latency_s + model.weight_bytes(DType::BF16) / p.bandwidth_bytes_s;
}

}  // namespace april::sim
