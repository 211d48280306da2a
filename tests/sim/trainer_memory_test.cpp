// The trainer's model states per GPU (sim/trainer_memory), worked by hand; the
// checks take no activations here ({}: no tokens), which trainer_activations_test counts.
#include <gtest/gtest.h>

#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "sim/trainer_memory.hpp"
#include "trainer_layouts.hpp"

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
  EXPECT_FALSE(trainer_memory_shortfall(m, s, resolve_accelerator("h20"), {}).has_value());  // 61 GB < 102.6 GB (97,871 MiB)
  s.fsdp_shard_gpus = 1;                                                                     // 122 GB
  const auto why = trainer_memory_shortfall(m, s, resolve_accelerator("h20"), {});
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
  EXPECT_FALSE(trainer_memory_shortfall(m, s, resolve_accelerator("h20"), {}).has_value());
  // Qwen3-235B-A22B on the same layout does not fit an H20.
  EXPECT_TRUE(trainer_memory_shortfall(resolve_model("qwen3-235b-a22b"), s, resolve_accelerator("h20"), {}).has_value());
}

// DeepSeek-V3 as slime's scripts/run-deepseek-r1.sh lays it out on 128 GPUs:
// TP 8 x PP 4 x CP 4 (one data-parallel rank), EP 32. The routed experts
// (58 x 256 x 3 x 7168 x 2048 = 653,908,770,816 parameters) over EP 32 x PP 4,
// the rest over TP 8 x PP 4. The GPU holds 6 B of each of its parameters and,
// on the GPU, 12 B more for the optimizer's share; slime offloads that share
// to the CPU (--optimizer-cpu-offload, fraction 1), 16 B in pinned host memory.
TEST(TrainerMemory, OffloadedOptimizerLeavesSixBytesOnTheGpuAndSixteenOnTheHost) {
  auto s = testing::slime_deepseek_v3_layout();
  s.offload = false;
  const auto m = resolve_model("deepseek-v3");
  const auto h800 = resolve_accelerator("h800");
  const double experts = 653908770816.0;
  const double local = (static_cast<double>(m.total_params()) - experts) / 32 + experts / 128;
  EXPECT_NEAR(trainer_state_bytes(m, s).per_gpu, 18 * local, 1.0);
  const auto full = trainer_memory_shortfall(m, s, h800, {});
  ASSERT_TRUE(full.has_value());
  EXPECT_NE(full->find("need 101.6 GB per GPU"), std::string::npos) << *full;

  s.optimizer_offload_fraction = 1;
  EXPECT_NEAR(trainer_state_bytes(m, s).per_gpu, 6 * local, 1.0);
  EXPECT_NEAR(trainer_state_bytes(m, s).per_gpu / 1e9, 33.86, 0.01);  // 5,643,588,784 parameters a GPU
  EXPECT_FALSE(trainer_memory_shortfall(m, s, h800, {}).has_value());
  const auto host = trainer_host_bytes(m, s, h800);
  EXPECT_EQ(host.gpus_per_node, 8);
  EXPECT_NEAR(host.per_node, 8 * 16 * local, 1.0);
  EXPECT_NEAR(host.per_node / 1e9, 722.38, 0.01);  // of the node's 2 TB
  s.offload = true;                                // colocated: each GPU also parks its bf16 weights there between updates
  EXPECT_NEAR(trainer_host_bytes(m, s, h800).per_node, 8 * (16 * local + 2 * local), 1.0);
  EXPECT_NEAR(trainer_host_bytes(m, s, h800).per_node / 1e9, 812.68, 0.01);
  s.host_memory_bytes = 512e9;
  const auto tight = trainer_memory_shortfall(m, s, h800, {});
  ASSERT_TRUE(tight.has_value());
  EXPECT_NE(tight->find("host memory per node"), std::string::npos) << *tight;
  EXPECT_NE(tight->find("train.host_memory_GB 512"), std::string::npos) << *tight;

  s.gpus = 4;  // a trainer smaller than a node holds only its own GPUs' share
  s.tensor_parallel = 4, s.pipeline_parallel = 1, s.context_parallel = 1, s.expert_parallel = 4;
  const double local4 = (static_cast<double>(m.total_params()) - experts) / 4 + experts / 4;
  EXPECT_EQ(trainer_host_bytes(m, s, h800).gpus_per_node, 4);
  EXPECT_NEAR(trainer_host_bytes(m, s, h800).per_node, 4 * (16 * local4 + 2 * local4), 1e3);
  s.gpus = 128;
  s.tensor_parallel = 8, s.pipeline_parallel = 4, s.context_parallel = 4, s.expert_parallel = 32;
  s.offload = false;
  s.host_memory_bytes = 2048e9;
  s.optimizer_offload_fraction = 0.5;  // half the 12 B stays on the GPU: 67.7 GB
  EXPECT_NEAR(trainer_state_bytes(m, s).per_gpu, 12 * local, 1.0);
  EXPECT_NEAR(trainer_host_bytes(m, s, h800).per_node, 8 * 8 * local, 1.0);
}

}  // namespace
}  // namespace april::sim
