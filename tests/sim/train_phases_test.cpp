// The train-step phases against hand-worked formulas (docs/design.md section 7).
#include <gtest/gtest.h>

#include <string>

#include "base/config.hpp"
#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "sim/train_phases.hpp"

namespace april::sim {
namespace {

const Accelerator& h100() { return builtin_accelerators()[1]; }

TEST(TrainPhases, MegatronDataParallelByHand) {
  const auto m = resolve_model("qwen3-4b");
  TrainerSetup s;  // Megatron, 8 GPUs, TP = PP = 1: DP 8
  s.offload = true;
  s.engine_weights_per_gpu_bytes = 4e9;
  const TrainBatchShape b{256, 1000000, 8000, 2e9};
  const auto t = train_phase_times(m, h100(), s, b);
  const double n = 4022468096.0;
  const double forward = m.linear_flops_per_token() * 1e6 + 4.0 * 36 * 32 * 128 * 2e9;  // attention: 4 L H d per pair
  const double flop_s = 8 * 989e12 * 0.35;
  EXPECT_NEAR(t.old_logprob_s, forward / flop_s, 1e-9);
  EXPECT_NEAR(t.update_s, 3 * forward / flop_s, 1e-9);
  EXPECT_EQ(t.ref_logprob_s, 0.0);
  // One optimizer step: bf16 gradients of the whole model, ring all-reduce over 8 GPUs inside the node.
  EXPECT_NEAR(t.grad_reduce_s, 2.0 * 7 / 8 * n * 2 / (450e9 * 0.77), 1e-9);
  // Adam: 28 B per parameter of the rank's eighth.
  EXPECT_NEAR(t.optimizer_s, 28.0 * n / 8 / (3.35e12 * 0.8), 1e-12);
  // Offload: weights (2 B) and Adam state of its eighth (12 B), off and on, and the engines' weights back.
  EXPECT_NEAR(t.offload_s, (2 * (n / 8 * 12 + n * 2) + 4e9) / (64e9 * 0.8), 1e-9);
  EXPECT_NEAR(t.total_s(), t.old_logprob_s + t.update_s + t.grad_reduce_s + t.optimizer_s + t.offload_s, 1e-9);
}

// The elementwise work is HBM time beside the matmuls: each forward moves the
// activations (hidden + intermediate per layer, bf16) activation_passes times;
// the backward twice that, a recomputed forward once more.
TEST(TrainPhases, ElementwiseWorkIsMemoryTimeBesideTheMatmuls) {
  const auto m = resolve_model("qwen3-4b");
  TrainerSetup s;
  s.activation_passes = 40;
  s.full_recompute = true;
  const TrainBatchShape b{256, 1000000, 8000, 2e9};
  const auto t = train_phase_times(m, h100(), s, b);
  const double forward = m.linear_flops_per_token() * 1e6 + 4.0 * 36 * 32 * 128 * 2e9;
  const double elementwise = 40.0 * 36 * (2560 + 9728) * 2 * 1e6 / (8 * 3.35e12 * 0.8);
  EXPECT_DOUBLE_EQ(m.activation_elements_per_token(), 36.0 * (2560 + 9728));
  EXPECT_NEAR(t.old_logprob_s, forward / (8 * 989e12 * 0.35) + elementwise, 1e-9);
  EXPECT_NEAR(t.update_s, 4 * (forward / (8 * 989e12 * 0.35) + elementwise), 1e-9);
  // An accelerator with more HBM per FLOP reaches a larger share of its peak:
  // the A100's forward is the longer, but by less than the peaks' ratio.
  const auto& a100 = builtin_accelerators()[0];
  ASSERT_EQ(a100.name, "a100");
  const auto slow = train_phase_times(m, a100, s, b);
  EXPECT_LT(slow.old_logprob_s / t.old_logprob_s, 989.0 / 312.0);
  s.activation_passes = 0;
  EXPECT_NEAR(train_phase_times(m, a100, s, b).old_logprob_s / train_phase_times(m, h100(), s, b).old_logprob_s, 989.0 / 312.0, 1e-9);
}

// Megatron's optimizer CPU offload: the offloaded fraction steps on the CPU at
// train.cpu_optimizer_params_per_s per GPU, the rest on the GPU as before, and
// a colocated offload moves only what is still on the GPU.
TEST(TrainPhases, OffloadedOptimizerStepsOnTheCpu) {
  const auto m = resolve_model("qwen3-4b");
  TrainerSetup s;  // Megatron, 8 GPUs, DP 8
  s.offload = true;
  s.ppo_mini_batches = 2;
  const TrainBatchShape b{256, 1000000, 8000, 2e9};
  const double n = 4022468096.0;
  s.optimizer_offload_fraction = 1;
  s.cpu_optimizer_params_s = 1e9;
  auto t = train_phase_times(m, h100(), s, b);
  EXPECT_NEAR(t.optimizer_s, 2 * (n / 8) / 1e9, 1e-12);
  EXPECT_NEAR(t.offload_s, 2 * (n * 2) / (64e9 * 0.8), 1e-9);  // only the bf16 weights move
  EXPECT_NEAR(trainer_state_per_gpu_bytes(m, s), n * 2, 1.0);
  s.optimizer_offload_fraction = 0.25;
  t = train_phase_times(m, h100(), s, b);
  EXPECT_NEAR(t.optimizer_s, 2 * (0.75 * 28.0 * n / 8 / (3.35e12 * 0.8) + 0.25 * (n / 8) / 1e9), 1e-12);
  EXPECT_NEAR(t.offload_s, 2 * (0.75 * n / 8 * 12 + n * 2) / (64e9 * 0.8), 1e-9);
}

TEST(TrainPhases, OptimizerOffloadIsMegatronsAndAFraction) {
  const auto m = resolve_model("qwen3-4b");
  TrainerSetup s;
  s.optimizer_offload_fraction = 1.5;
  try {
    check_trainer_setup(s, m, h100());
    ADD_FAILURE() << "a fraction of 1.5 was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.optimizer_offload_fraction 1.5 is not in [0, 1]"), std::string::npos) << e.what();
  }
  s.optimizer_offload_fraction = 1;
  s.framework = TrainFramework::Fsdp;
  try {
    check_trainer_setup(s, m, h100());
    ADD_FAILURE() << "FSDP with Megatron's optimizer offload was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.optimizer_offload_fraction 1 is Megatron's"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("train.framework fsdp"), std::string::npos) << e.what();
  }
}

TEST(TrainPhases, MiniBatchesEpochsAndThePipelineBubble) {
  const auto m = resolve_model("qwen3-4b");
  TrainerSetup s;
  s.gpus = 16;
  s.pipeline_parallel = 4;  // DP 4
  s.ppo_mini_batches = 2;
  s.ppo_epochs = 3;
  s.micro_batch_tok = 10000;
  const TrainBatchShape b{256, 1000000, 8000, 0};
  const auto t = train_phase_times(m, h100(), s, b);
  const double forward = m.linear_flops_per_token() * 1e6 / (16 * 989e12 * 0.35);
  // Each pipeline sees 250,000 tokens: 25 micro-batches for the forward, 13 per mini-batch; 1F1B bubble (pp - 1) / m.
  EXPECT_NEAR(t.old_logprob_s, forward * (1 + 3.0 / 25), 1e-9);
  EXPECT_NEAR(t.update_s, 3 * 3 * forward * (1 + 3.0 / 13), 1e-9);
  // Six optimizer steps, each all-reducing a quarter of the model (PP 4) over DP 4 across two nodes' NICs.
  const double shard = 4022468096.0 / 4;
  EXPECT_NEAR(t.grad_reduce_s, 6 * 2.0 * 3 / 4 * shard * 2 / (50e9 * 0.77), 1e-9);
  EXPECT_EQ(t.offload_s, 0.0);
}

// A local step (async.local_steps) is its share of the step: with a quarter
// of the batch, a quarter of the mini-batches (so of the optimizer steps and
// their reductions) and of the fixed cost; its micro-batches and bubble are
// those of its own mini-batches.
TEST(TrainPhases, ALocalStepTakesItsShareOfTheMiniBatchesAndTheFixedCost) {
  const auto m = resolve_model("qwen3-4b");
  TrainerSetup s;
  s.gpus = 16;
  s.pipeline_parallel = 4;  // DP 4
  s.ppo_mini_batches = 8;
  s.micro_batch_tok = 10000;
  s.fixed_s = 6.0;
  const auto whole = train_phase_times(m, h100(), s, TrainBatchShape{256, 1000000, 8000, 0});
  TrainBatchShape quarter{64, 250000, 8000, 0};
  quarter.step_parts = 4;
  const auto t = train_phase_times(m, h100(), s, quarter);
  const double forward = m.linear_flops_per_token() * 250000 / (16 * 989e12 * 0.35);
  // 62,500 tokens per pipeline: 7 micro-batches for the forward; 2 mini-batches of 4 each.
  EXPECT_NEAR(t.old_logprob_s, forward * (1 + 3.0 / 7), 1e-9);
  EXPECT_NEAR(t.update_s, 3 * forward * (1 + 3.0 / 4), 1e-9);
  EXPECT_NEAR(t.grad_reduce_s, whole.grad_reduce_s / 4, 1e-12);
  EXPECT_NEAR(t.optimizer_s, whole.optimizer_s / 4, 1e-12);
  EXPECT_DOUBLE_EQ(t.other_s, 1.5);
  EXPECT_DOUBLE_EQ(whole.other_s, 6.0);
}

TEST(TrainPhases, FsdpShowsOnlyTheGathersComputeCannotHide) {
  const auto m = resolve_model("qwen3-4b");
  TrainerSetup s;
  s.framework = TrainFramework::Fsdp;
  s.gpus = 16;  // two nodes: gathers through the NICs
  const double gather = 15.0 / 16 * 4022468096.0 * 2 / (50e9 * 0.77);
  const auto tiny = train_phase_times(m, h100(), s, TrainBatchShape{1, 100, 100, 5050});
  // Per update: the forward's and the backward's gathers (bf16) and the
  // gradients' reduce-scatter in fp32, twice a gather's bytes.
  EXPECT_NEAR(tiny.grad_reduce_s, (gather - tiny.old_logprob_s) + (4 * gather - tiny.update_s), 1e-9);
  const auto big = train_phase_times(m, h100(), s, TrainBatchShape{4096, 40000000, 10000, 1e11});
  EXPECT_EQ(big.grad_reduce_s, 0.0);  // hidden behind compute
}

// HSDP (verl's fsdp_size 2 on 16 GPUs): gathers inside pairs of GPUs (NVLink),
// then each GPU's fp32 gradient half all-reduced across the 8 replicas
// (through the NICs); Adam state and offload per GPU are half the model's.
TEST(TrainPhases, HsdpAllReducesEachShardAcrossItsReplicas) {
  const auto m = resolve_model("qwen3-4b");
  TrainerSetup s;
  s.framework = TrainFramework::Fsdp;
  s.gpus = 16;
  s.fsdp_shard_gpus = 2;
  s.offload = true;
  const double params = 4022468096.0;
  const double gather = 1.0 / 2 * params * 2 / (450e9 * 0.77);
  const double replica = 2.0 * 7 / 8 * params / 2 * 4 / (50e9 * 0.77);
  const auto t = train_phase_times(m, h100(), s, TrainBatchShape{1, 100, 100, 5050});
  EXPECT_NEAR(t.grad_reduce_s, (gather - t.old_logprob_s) + (4 * gather + replica - t.update_s), 1e-9);
  EXPECT_NEAR(t.optimizer_s, 28.0 * params / 2 / (h100().hbm_bytes_s * 0.8), 1e-12);
  EXPECT_NEAR(t.offload_s, 2.0 * (params / 2 * 14.0) / (h100().host_link_bytes_s * 0.8), 1e-9);
  s.fsdp_shard_gpus = 3;
  EXPECT_THROW(check_trainer_setup(s, m, h100()), base::ConfigError);
}

TEST(TrainPhases, BadLayoutsAreRefusedByKey) {
  const auto m = resolve_model("qwen3-4b");
  TrainerSetup s;
  s.tensor_parallel = 3;
  EXPECT_THROW(check_trainer_setup(s, m, h100()), base::ConfigError);
  s.tensor_parallel = 1;
  s.gpus = 64;
  s.pipeline_parallel = 64;  // 36 layers
  try {
    check_trainer_setup(s, m, h100());
    FAIL() << "accepted PP 64 for 36 layers";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.pipeline_parallel 64 is more stages than qwen3-4b's 36 layers"), std::string::npos)
        << e.what();
  }
  s.gpus = 8;
  s.pipeline_parallel = 1;
  s.expert_parallel = 2;  // a dense model has no experts
  EXPECT_THROW(check_trainer_setup(s, m, h100()), base::ConfigError);
}

}  // namespace
}  // namespace april::sim

namespace april::sim {
namespace {

// 61 layers on 4 stages: the deepest has 16, so the pipeline runs 16 / 15.25 slower.
TEST(TrainPhases, UnevenStagesRunAtTheDeepestsPace) {
  const auto m = resolve_model("deepseek-v3");
  TrainerSetup s;
  s.gpus = 128;
  s.tensor_parallel = 8;
  s.pipeline_parallel = 4;
  s.context_parallel = 4;  // DP 1
  s.expert_parallel = 32;
  s.micro_batch_tok = 1000000000;  // one micro-batch: bubble (pp - 1) / 1
  check_trainer_setup(s, m, h100());
  const auto t = train_phase_times(m, h100(), s, TrainBatchShape{8, 80000, 10000, 4e8});
  const double forward = (m.linear_flops_per_token() * 80000 + m.attention_flops_per_token(1, false) * 4e8) / (128 * 989e12 * 0.35);
  // Beside the pipeline: TP 8's two bf16 all-reduces per layer of the deepest
  // stage's 16, over the CP share of the tokens, on NVLink (450 GB/s x 0.77).
  const double tp_s = 2.0 * 16 * (80000.0 / 4) * static_cast<double>(m.hidden) * 2.0 * 2.0 * 7.0 / 8.0 / (450e9 * 0.77);
  EXPECT_NEAR(t.old_logprob_s, forward * 16.0 / 15.25 * 4.0 + tp_s, 1e-9);
  EXPECT_EQ(t.grad_reduce_s, 0.0);  // DP 1
}

}  // namespace
}  // namespace april::sim
