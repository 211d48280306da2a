#pragma once
// Train and weight-sync time of one step, for the colocated mode of the APRIL
// paper: rollout and training take turns on the same GPUs, so phase times add.
#include <cstdint>

#include "sim/hardware.hpp"
#include "sim/model_arch.hpp"
#include "sim/train_phases.hpp"

namespace april::sim {

struct TrainCostParams {
  double mfu = 0.35;      // model FLOPs utilisation of the trainer
  std::int64_t gpus = 8;  // GPUs the trainer uses
  double fixed_s = 0.0;   // per-step fixed cost (optimizer step, offload/onload)
};

struct SyncCostParams {
  double bandwidth_bytes_s = 100e9;  // effective trainer-to-engine weight bandwidth
  double latency_s = 0.0;            // fixed cost per sync (pause, update, resume)
};

// 6 * activated params * tokens (forward + backward; Kaplan et al. 2020's
// 6N per token, N the parameters a token runs) over MFU * BF16 peak * GPUs.
double train_time_s(const ModelArch& model, const Accelerator& hw, const TrainCostParams& p, std::int64_t tokens);
// The trainer's bf16 weight bytes over bandwidth, plus latency.
double sync_time_s(const ModelArch& model, const SyncCostParams& p);

}  // namespace april::sim
