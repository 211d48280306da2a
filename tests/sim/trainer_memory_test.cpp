// The trainer's model states per GPU (sim/trainer_memory), worked by hand.
#include <gtest/gtest.h>

#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "sim/trainer_memory.hpp"

namespace april::sim {
namespace {

// Qwen2.5-Math-7B, 7,615,616,512 parameters, FSDP sharded over 2 GPUs:
// 16 B each over 2 = 60.92 GB a GPU.
TEST(TrainerMemory, FsdpShardsSixteenBytesPerParameter) {
  TrainerSetup s;
  s.framework = TrainFramework::Fsdp;
  s.gpus = 8;
  s.fsdp_shard_gpus = 2;
  const auto m = resolve_model("qwen2.5-math-7b");
  EXPECT_NEAR(trainer_state_bytes(m, s).per_gpu, 16.0 * static_cast<double>(m.total_params()) / 2, 1.0);
  EXPECT_FALSE(trainer_memory_shortfall(m, s, resolve_accelerator("h20")).has_value());  // 61 GB < 96 GB
  s.fsdp_shard_gpus = 1;                                                                // 122 GB
  const auto why = trainer_memory_shortfall(m, s, resolve_accelerator("h20"));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("need 121.8 GB per GPU"), std::string::npos) << *why;
}

// Qwen3-30B-A3B under Megatron TP 4, EP 8 on 16 GPUs: the experts
// (48 x 128 x 3 x 2048 x 768 = 28,991,029,248 parameters) over EP 8, the
// rest over TP 4; 6 B each, plus 12 B over data parallelism 16 / 4 = 4.
TEST(TrainerMemory, MegatronShardsDenseByTpAndExpertsByEp) {
  TrainerSetup s;
  s.framework = TrainFramework::Megatron;
  s.gpus = 16;
  s.tensor_parallel = 4;
  s.expert_parallel = 8;
  const auto m = resolve_model("qwen3-30b-a3b");
  const double experts = 48.0 * 128 * 3 * 2048 * 768;
  const double local = (static_cast<double>(m.total_params()) - experts) / 4 + experts / 8;
  EXPECT_NEAR(trainer_state_bytes(m, s).per_gpu, 6 * local + 12 * local / 4, 1.0);
  EXPECT_FALSE(trainer_memory_shortfall(m, s, resolve_accelerator("h20")).has_value());
  // Qwen3-235B-A22B on the same layout does not fit an H20.
  EXPECT_TRUE(trainer_memory_shortfall(resolve_model("qwen3-235b-a22b"), s, resolve_accelerator("h20")).has_value());
}

}  // namespace
}  // namespace april::sim
