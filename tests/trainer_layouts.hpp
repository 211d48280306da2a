#pragma once
// Published trainer layouts the trainer memory tests work by hand.
#include "sim/train_phases.hpp"

namespace april::sim::testing {

// DeepSeek-V3 as slime's scripts/run-deepseek-r1.sh lays it out on 128 GPUs:
// Megatron TP 8 x PP 4 x CP 4 (one data-parallel rank), EP 32, dynamic
// batches of up to 16,384 tokens a GPU.
inline TrainerSetup slime_deepseek_v3_layout() {
  TrainerSetup s;
  s.framework = TrainFramework::Megatron;
  s.gpus = 128;
  s.tensor_parallel = 8;
  s.pipeline_parallel = 4;
  s.context_parallel = 4;
  s.expert_parallel = 32;
  s.micro_batch_tok = 16384;
  return s;
}

}  // namespace april::sim::testing
