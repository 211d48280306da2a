// The trainer's activation lower bound (sim/trainer_activations), worked by
// hand from the models' config.json files in the catalog.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "sim/trainer_activations.hpp"
#include "sim/trainer_memory.hpp"
#include "trainer_layouts.hpp"

namespace april::sim {
namespace {

// verl's FSDP on 128 GPUs, its state sharded over pairs (fsdp_size 2).
TrainerSetup fsdp_over_pairs(std::int64_t ulysses, std::int64_t micro_batch_tok) {
  TrainerSetup s;
  s.framework = TrainFramework::Fsdp;
  s.gpus = 128;
  s.fsdp_shard_gpus = 2;
  s.context_parallel = ulysses;
  s.micro_batch_tok = micro_batch_tok;
  return s;
}

// verl's published Qwen2.5-Math-7B colocate run (scenario/examples/
// qwen2.5-math-7b-128xh20-colocated.json): FSDP over pairs, Ulysses 4,
// micro-batches of up to 61,440 tokens a GPU, responses up to 28,672.
// hidden 3584, 28 layers, 28 query and 4 KV heads of 128, intermediate
// 18944, vocabulary 152064.
//   a layer per token beyond its input: attention 3584 + 3584 + 2 x 512 +
//   3584 = 11,776, MLP 2 x 3584 + 3 x 18944 = 64,000; 75,776 elements,
//   151,552 B;
//   a GPU holds at least min(61,440, 28,672 / 4) = 7,168 tokens;
//   checkpoints 28 x 7,168 x 3584 x 2 B = 1.44 GB; logits 7,168 x 152,064 x
//   2 B = 2.18 GB, above one layer's 1.09 GB: 3.62 GB, beside 60.92 GB of
//   model states.
TEST(TrainerActivations, VerlSevenBColocatedHoldsItsLongestResponse) {
  const auto s = fsdp_over_pairs(/*ulysses=*/4, /*micro_batch_tok=*/61440);
  const ActivationInputs in{28672, false};
  const auto m = resolve_model("qwen2.5-math-7b");
  EXPECT_DOUBLE_EQ(layer_activation_bytes_per_token(m), 151552.0);
  const auto a = trainer_activation_bytes(m, s, in);
  EXPECT_DOUBLE_EQ(a.tokens_per_gpu, 7168.0);
  EXPECT_DOUBLE_EQ(a.checkpoints, 28.0 * 7168 * 3584 * 2);
  EXPECT_DOUBLE_EQ(a.layer, 7168.0 * 151552);
  EXPECT_DOUBLE_EQ(a.logits, 7168.0 * 152064 * 2);
  EXPECT_DOUBLE_EQ(a.per_gpu, a.checkpoints + a.logits);
  EXPECT_NEAR(a.per_gpu / 1e9, 3.62, 0.01);
  EXPECT_FALSE(trainer_memory_shortfall(m, s, resolve_accelerator("h20"), in).has_value());
  // Fused log-probabilities hold no logits; one layer is what is left.
  const auto fused = trainer_activation_bytes(m, s, {28672, true});
  EXPECT_DOUBLE_EQ(fused.logits, 0.0);
  EXPECT_DOUBLE_EQ(fused.per_gpu, a.checkpoints + a.layer);
  EXPECT_NE(fused.how.find("for one layer recomputed"), std::string::npos) << fused.how;
}

// A long-context run on the same states: 131,072-token responses, no
// Ulysses, micro-batches of as many. 28 x 131,072 x 3584 x 2 B = 26.31 GB of
// checkpoints and 131,072 x 152,064 x 2 B = 39.86 GB of logits: 66.17 GB, and
// with 60.92 GB of states 127.1 GB, more than an H20. The micro-batch's cap
// binds below the longest response.
TEST(TrainerActivations, ALongContextDoesNotFitBesideTheStates) {
  auto s = fsdp_over_pairs(/*ulysses=*/1, /*micro_batch_tok=*/131072);
  const auto m = resolve_model("qwen2.5-math-7b");
  const auto why = trainer_memory_shortfall(m, s, resolve_accelerator("h20"), {131072, false});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("needs at least 127.1 GB per GPU"), std::string::npos) << *why;
  EXPECT_NE(why->find("66.2 GB of activations"), std::string::npos) << *why;
  EXPECT_NE(why->find("train.micro_batch_tok"), std::string::npos) << *why;
  s.micro_batch_tok = 8192;
  EXPECT_DOUBLE_EQ(trainer_activation_bytes(m, s, {131072, false}).tokens_per_gpu, 8192.0);
  EXPECT_FALSE(trainer_memory_shortfall(m, s, resolve_accelerator("h20"), {131072, false}).has_value());
}

// DeepSeek-V3 as slime lays it out (TP 8 x PP 4 x CP 4, EP 32, micro-batches
// of up to 16,384 tokens a GPU, responses up to 32,768): min(16,384,
// 32,768 / 4) = 8,192 tokens, 1,024 a GPU under sequence parallelism. A MoE
// layer per token beyond its input: MLA attention 7168 + (1536 + 512 + 64) +
// 2 x 128 x 192 + 2 x 128 x 128 = 91,200; MLP 2 x 7168 + 8 x (7168 + 3 x
// 2048) + 3 x 2048 = 126,976; 436,352 B in all. The deepest stage's 16 layers'
// inputs (0.23 GB) and one layer (0.45 GB) come to 0.68 GB; the last stage's
// fp32 logits and exponentials of V / TP, 8,192 x 129,280 / 8 x 8 B =
// 1.06 GB, are the peak.
TEST(TrainerActivations, MegatronSplitsTokensOverTpAndTheLastStageHoldsTheLogits) {
  auto s = testing::slime_deepseek_v3_layout();
  s.optimizer_offload_fraction = 1;
  const ActivationInputs in{32768, false};
  const auto m = resolve_model("deepseek-v3");
  EXPECT_DOUBLE_EQ(layer_activation_bytes_per_token(m), 436352.0);
  const auto a = trainer_activation_bytes(m, s, in);
  EXPECT_DOUBLE_EQ(a.tokens_per_gpu, 1024.0);
  EXPECT_DOUBLE_EQ(a.checkpoints, 16.0 * 1024 * 7168 * 2);
  EXPECT_DOUBLE_EQ(a.logits, 8192.0 * 129280 / 8 * 8);
  EXPECT_DOUBLE_EQ(a.per_gpu, a.logits);
  EXPECT_NE(a.how.find("the last stage's 1.1 GB of logits (8 B per token per vocabulary entry of its V / TP)"), std::string::npos) << a.how;
  EXPECT_FALSE(trainer_memory_shortfall(m, s, resolve_accelerator("h800"), in).has_value());

  s.pipeline_parallel = 1;  // one stage: all 61 layers' inputs, then the logits
  const auto one = trainer_activation_bytes(m, s, in);
  EXPECT_DOUBLE_EQ(one.per_gpu, 61.0 * 1024 * 7168 * 2 + 8192.0 * 129280 / 8 * 8);
  EXPECT_NE(one.how.find("(61 layers) + 1.1 GB of logits"), std::string::npos) << one.how;
}

}  // namespace
}  // namespace april::sim
