// The trainer's activation lower bound (sim/trainer_activations), worked by
// hand from the models' config.json files in the catalog.
#include <gtest/gtest.h>

#include <string>

#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "sim/trainer_activations.hpp"
#include "sim/trainer_memory.hpp"

namespace april::sim {
namespace {

// verl's published Qwen2.5-Math-7B colocate run (scenario/examples/
// qwen2.5-math-7b-128xh20-colocated.json): FSDP over pairs, Ulysses 4,
// 61,440 tokens a GPU. hidden 3584, 28 layers, 28 query and 4 KV heads of
// 128, intermediate 18944, vocabulary 152064.
//   a layer per token: attention 2 x 3584 + 3584 + 2 x 512 + 3584 = 15,360,
//   MLP 2 x 3584 + 4 x 18944 = 82,944; 98,304 elements, 196,608 B;
//   checkpoints 28 x 61,440 x 3584 x 2 B = 12.33 GB;
//   logits 61,440 x 152,064 x 2 B = 18.69 GB > one layer's 12.08 GB.
TEST(TrainerActivations, VerlSevenBColocatedFitsAnH20) {
  TrainerSetup s;
  s.framework = TrainFramework::Fsdp;
  s.gpus = 128;
  s.fsdp_shard_gpus = 2;
  s.context_parallel = 4;
  s.micro_batch_tok = 61440;
  const auto m = resolve_model("qwen2.5-math-7b");
  EXPECT_DOUBLE_EQ(layer_activation_bytes_per_token(m), 196608.0);
  const auto a = trainer_activation_bytes(m, s);
  EXPECT_DOUBLE_EQ(a.tokens_per_gpu, 61440.0);
  EXPECT_DOUBLE_EQ(a.checkpoints, 28.0 * 61440 * 3584 * 2);
  EXPECT_DOUBLE_EQ(a.layer, 61440.0 * 196608);
  EXPECT_DOUBLE_EQ(a.logits, 61440.0 * 152064 * 2);
  EXPECT_DOUBLE_EQ(a.per_gpu, a.checkpoints + a.logits);
  EXPECT_NEAR(a.per_gpu / 1e9, 31.02, 0.01);
  // With 60.92 GB of model states: 91.9 GB of the H20's 96.
  EXPECT_FALSE(trainer_memory_shortfall(m, s, resolve_accelerator("h20")).has_value());

  s.micro_batch_tok = 2 * 61440;  // 62 GB of activations
  const auto why = trainer_memory_shortfall(m, s, resolve_accelerator("h20"));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("needs at least 123.0 GB per GPU"), std::string::npos) << *why;
  EXPECT_NE(why->find("62.0 GB of activations"), std::string::npos) << *why;
  EXPECT_NE(why->find("train.micro_batch_tok"), std::string::npos) << *why;
}

// DeepSeek-V3 as slime lays it out (TP 8 x PP 4 x CP 4, EP 32, 16,384 tokens
// a GPU). Sequence parallelism leaves 2,048 tokens of each layer's input a
// GPU; the first stage's 16 layers hold 4 micro-batches:
// 4 x 16 x 2048 x 7168 x 2 B = 1.88 GB. A MoE layer per token: MLA
// attention 2 x 7168 + (1536 + 512 + 64) + 2 x 128 x 192 + 2 x 128 x 128 =
// 98,368; MLP 2 x 7168 + 8 x (7168 + 4 x 2048) + 4 x 2048 = 145,408; in all
// 487,552 B, 1.00 GB at 2,048 tokens. The last stage's fp32 logits and
// softmax of V / TP: 16,384 x 129,280 / 8 x 8 B = 2.12 GB, with 16 layers'
// inputs of one micro-batch 2.59 GB: the first stage peaks, at 2.88 GB.
TEST(TrainerActivations, MegatronFirstStageHoldsPipelineDepthMicroBatches) {
  TrainerSetup s;
  s.gpus = 128;
  s.tensor_parallel = 8;
  s.pipeline_parallel = 4;
  s.context_parallel = 4;
  s.expert_parallel = 32;
  s.micro_batch_tok = 16384;
  s.optimizer_offload_fraction = 1;
  const auto m = resolve_model("deepseek-v3");
  EXPECT_DOUBLE_EQ(layer_activation_bytes_per_token(m), 487552.0);
  const auto a = trainer_activation_bytes(m, s);
  EXPECT_DOUBLE_EQ(a.tokens_per_gpu, 2048.0);
  EXPECT_DOUBLE_EQ(a.logits, 16384.0 * 129280 / 8 * 8);
  EXPECT_DOUBLE_EQ(a.checkpoints, 4.0 * 16 * 2048 * 7168 * 2);
  EXPECT_DOUBLE_EQ(a.per_gpu, a.checkpoints + 2048.0 * 487552);
  EXPECT_NE(a.how.find("x 4 micro-batches in flight"), std::string::npos) << a.how;
  EXPECT_FALSE(trainer_memory_shortfall(m, s, resolve_accelerator("h800")).has_value());

  s.pipeline_parallel = 1;  // one stage: all 61 layers' inputs, then the logits
  const auto one = trainer_activation_bytes(m, s);
  EXPECT_DOUBLE_EQ(one.per_gpu, 61.0 * 2048 * 7168 * 2 + 16384.0 * 129280 / 8 * 8);
  EXPECT_NE(one.how.find("of logits"), std::string::npos) << one.how;
}

}  // namespace
}  // namespace april::sim
