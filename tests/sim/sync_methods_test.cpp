// Weight sync as implemented (sim/sync_methods, sim/checkpoint_tensors): the
// checkpoint's tensors, how each method counts its transfers, and the time a
// scenario's sync takes under each.
#include <gtest/gtest.h>

#include <numeric>

#include "base/config.hpp"
#include "sim/checkpoint_tensors.hpp"
#include "sim/model_catalog.hpp"
#include "sim/sync_methods.hpp"
#include "sim/topology.hpp"
#include "sim/train_sync_knobs.hpp"
#include "test_support.hpp"

namespace april::sim {
namespace {

constexpr double GB = 1e9;

// Every built-in model's tensors hold exactly its parameters: the per-tensor
// enumeration and the per-layer counts (checked against the published sizes
// in model_arch_test) agree.
TEST(CheckpointTensors, ElementsSumToTheTotalOfEveryBuiltinModel) {
  for (const auto& name : builtin_model_names()) {
    const auto m = resolve_model(name);
    const auto t = checkpoint_tensor_elements(m);
    EXPECT_EQ(std::accumulate(t.begin(), t.end(), std::int64_t{0}), m.total_params()) << name;
  }
}

// Counted by hand from the Hugging Face module layouts:
// Qwen2.5-Math-7B: 28 layers x (q, k, v with biases = 6, o, 2 norms, 3 MLP = 12) + embed, norm, lm_head = 339.
// Qwen3-0.6B: 28 x (q, k, v, o, q_norm, k_norm, 2 norms, 3 MLP = 11) + embed, norm (tied head) = 310.
// Qwen3-30B-A3B: 48 x (4 attention + 2 q/k norms + 2 norms + router + 128 x 3 experts = 393) + 3 = 18,867.
// Qwen3-235B-A22B: 94 x 393 + 3 = 36,945.
// DeepSeek-V3: MLA 7 tensors + 2 norms per layer; 3 dense layers with 3 MLP tensors; 58 MoE layers with
// the router, its correction bias, 256 x 3 experts and 3 shared-expert tensors: 3 x 12 + 58 x 782 + 3 = 45,395.
TEST(CheckpointTensors, CountsOfPublishedCheckpoints) {
  EXPECT_EQ(checkpoint_tensor_elements(resolve_model("qwen2.5-math-7b")).size(), 339u);
  EXPECT_EQ(checkpoint_tensor_elements(resolve_model("qwen3-0.6b")).size(), 310u);
  EXPECT_EQ(checkpoint_tensor_elements(resolve_model("qwen3-30b-a3b")).size(), 18867u);
  EXPECT_EQ(checkpoint_tensor_elements(resolve_model("qwen3-235b-a22b")).size(), 36945u);
  EXPECT_EQ(checkpoint_tensor_elements(resolve_model("deepseek-v3")).size(), 45395u);
  // One Qwen3-30B-A3B expert matrix: hidden 2048 x moe_intermediate 768.
  EXPECT_EQ(checkpoint_tensor_elements(resolve_model("qwen3-30b-a3b"))[10], 2048 * 768);
}

TEST(SyncMethods, PerTensorSendsEachTensorAlone) { EXPECT_EQ(sync_transfers(SyncMethod::PerTensor, {3, 3, 3, 5}, 6, 1), 4); }

// A bucket closes when the next tensor would overflow it: [3 3] [3] [5] at 6
// bytes; a tensor larger than the bucket fills one alone.
TEST(SyncMethods, BucketsPackInOrder) {
  EXPECT_EQ(sync_transfers(SyncMethod::Bucketed, {3, 3, 3, 5}, 6, 1), 3);
  EXPECT_EQ(sync_transfers(SyncMethod::Bucketed, {3, 3, 3, 5}, 2, 1), 4);
  EXPECT_EQ(sync_transfers(SyncMethod::Bucketed, {3, 3, 3, 5}, 100, 1), 1);
  EXPECT_EQ(sync_transfers(SyncMethod::Bucketed, {}, 100, 1), 0);
  EXPECT_THROW((void)sync_transfers(SyncMethod::Bucketed, {1}, 0, 1), std::invalid_argument);
}

// verl's checkpoint engine: tensors dealt round-robin over the trainer's ranks,
// each aligned to 256 bytes, the bucket at least the largest aligned tensor.
// Ranks 0 and 1 hold [256, 256] and [512, 512]: buckets of 512 give 1 + 2.
TEST(SyncMethods, CheckpointEngineDealsTensorsOverTheTrainersRanks) {
  EXPECT_EQ(sync_transfers(SyncMethod::CheckpointEngine, {100, 300, 100, 300}, 256, 2), 3);
  // One rank: [256, 512, 256, 512] into 512-byte buckets, one per tensor but the first two.
  EXPECT_EQ(sync_transfers(SyncMethod::CheckpointEngine, {100, 300, 100, 300}, 256, 1), 4);
  // More ranks than tensors: the empty ranks send nothing.
  EXPECT_EQ(sync_transfers(SyncMethod::CheckpointEngine, {100, 300}, 1024, 8), 2);
  EXPECT_THROW((void)sync_transfers(SyncMethod::CheckpointEngine, {1}, 1, 0), std::invalid_argument);
}

TEST(SyncMethods, NamesRoundTrip) {
  for (const auto& name : sync_method_names()) {
    const auto m = sync_method_named(name);
    ASSERT_TRUE(m.has_value()) << name;
    EXPECT_EQ(sync_method_name(*m), name);
  }
  EXPECT_FALSE(sync_method_named("bandwidth").has_value());
}

// Whole weights reach every engine GPU: a link that carries two distinct TP
// shards (half the weights each) carries the whole weights once.
TEST(SyncMethods, FullWeightsPayloadCarriesTheWeightsOncePerLink) {
  Topology t{
      {"trainer", "sw", "a", "b"}, {{"trainer", "sw", 10 * GB}, {"sw", "a", 100 * GB}, {"sw", "b", 100 * GB}}, "trainer", {{"a", "b"}}, {}};
  EXPECT_DOUBLE_EQ(plan_weight_sync(t, 8 * GB, SyncPayload::TpShards).time_s, 0.8);  // 2 shards of 4 GB
  EXPECT_DOUBLE_EQ(plan_weight_sync(t, 8 * GB, SyncPayload::FullWeights).time_s, 0.8);
  EXPECT_EQ(plan_weight_sync(t, 8 * GB, SyncPayload::FullWeights).path_bottleneck_bytes_s.size(), 2u);
  // Behind their own 1 GB/s links, each GPU receives 4 GB as a shard, 8 GB whole.
  t.links[1].bytes_s = t.links[2].bytes_s = 1 * GB;
  EXPECT_DOUBLE_EQ(plan_weight_sync(t, 8 * GB, SyncPayload::TpShards).time_s, 4.0);
  EXPECT_DOUBLE_EQ(plan_weight_sync(t, 8 * GB, SyncPayload::FullWeights).time_s, 8.0);
}

// A scenario's sync under each method, by hand: the default scenario's
// Qwen3-4B has 4,022,468,096 parameters in 398 tensors (36 layers x 11 + embed
// and norm, tied head), 8.044936192 GB in bf16, at 100 GB/s.
TEST(SyncMethods, ScenarioSyncIsTransfersPlusBytesPlusLatency) {
  const double bytes_s = 8.044936192 / 100;
  april::testing::Fixture per_tensor("default", {"sync.time_model=per_tensor", "sync.per_transfer_ms=2", "sync.latency_s=0.5"});
  const auto w = weight_sync(per_tensor.config);
  EXPECT_NEAR(w.time_s, 0.5 + 398 * 0.002 + bytes_s, 1e-9);
  EXPECT_DOUBLE_EQ(w.bytes, 8.044936192e9);
  EXPECT_NE(w.how.find("per_tensor: 398 transfers"), std::string::npos) << w.how;
  // 1 GiB buckets: 8.04 GB in order (the 0.78 GB embedding, 36 layers of
  // 0.2 GB) fill 8 or 9 of them, as the packing's own test works out by hand.
  april::testing::Fixture bucketed("default",
                                   {"sync.time_model=bucketed", "sync.bucket_MB=1024", "sync.per_transfer_ms=2", "sync.latency_s=0"});
  const auto b = weight_sync(bucketed.config);
  const auto m = resolve_model("qwen3-4b");
  std::vector<double> tensor_bytes;
  for (const auto e : checkpoint_tensor_elements(m)) tensor_bytes.push_back(2.0 * static_cast<double>(e));
  const auto buckets = sync_transfers(SyncMethod::Bucketed, tensor_bytes, 1024.0 * 1024 * 1024, 1);
  EXPECT_GE(buckets, 8);
  EXPECT_LE(buckets, 9);
  EXPECT_NEAR(b.time_s, static_cast<double>(buckets) * 0.002 + bytes_s, 1e-9);
  // Everything else as the bandwidth model: the same bytes, no transfer cost.
  april::testing::Fixture plain("default", {"sync.latency_s=0"});
  april::testing::Fixture free_transfers("default", {"sync.time_model=per_tensor", "sync.per_transfer_ms=0", "sync.latency_s=0"});
  EXPECT_NEAR(weight_sync(free_transfers.config).time_s, weight_sync(plain.config).time_s, 1e-12);
}

TEST(SyncMethods, BadKeysAreRefusedByName) {
  EXPECT_THROW(april::testing::Fixture("default", {"sync.time_model=per_layer"}), base::ConfigError);
  EXPECT_THROW(april::testing::Fixture("default", {"sync.bucket_MB=0"}), base::ConfigError);
  EXPECT_THROW(april::testing::Fixture("default", {"sync.per_transfer_ms=-1"}), base::ConfigError);
}

}  // namespace
}  // namespace april::sim
