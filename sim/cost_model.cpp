#include "sim/cost_model.hpp"

namespace april::sim {

double train_time_s(const ModelProfile& model, const HardwareProfile& hw, const TrainCostParams& p, std::int64_t tokens) {
  const double flops = 6.0 * model.params * static_cast<double>(tokens);
  return p.fixed_s + flops / (p.mfu * hw.peak_bf16_flop_s * static_cast<double>(p.gpus));
}

double sync_time_s(const ModelProfile& model, const SyncCostParams& p) {
  return p.latency_s + model.weight_bytes() / p.bandwidth_bytes_s;
}

}  // namespace april::sim
