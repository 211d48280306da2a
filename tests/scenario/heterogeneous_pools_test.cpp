// Heterogeneous pools: engines on one accelerator, the
// trainer on another (train.hardware), on a disaggregated cluster.
#include <gtest/gtest.h>

#include "base/config.hpp"
#include "scenario/resolved_scenario.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/cluster_topology.hpp"
#include "sim/hardware.hpp"
#include "sim/train_sync_knobs.hpp"
#include "test_support.hpp"

namespace april::sim {
namespace {

const std::vector<std::string> kSplit = {"hardware=h20",         "cluster.mode=disaggregated", "cluster.gpus=16",        "cluster.nodes=2",
                                         "cluster.train_gpus=8", "cluster.tensor_parallel=2",  "train.time_model=flops", "train.fixed_s=0"};

std::vector<std::string> with(std::vector<std::string> sets, const std::string& more) {
  sets.push_back(more);
  return sets;
}

// The flops model is 6 x activated parameters x tokens / (MFU x peak x GPUs):
// the same batch on H800s (989 TFLOP/s bf16) takes 148 / 989 of its time on H20s.
TEST(HeterogeneousPools, TheTrainerRunsAtItsOwnAcceleratorsPeak) {
  april::testing::Fixture h20("default", kSplit);
  april::testing::Fixture h800("default", with(kSplit, "train.hardware=h800"));
  TrainBatchShape b;
  b.samples = 64;
  b.tokens = 64 * 4096;
  b.longest_tok = 4096;
  const double t20 = train_time_model(h20.config)(b).total_s();
  const double t800 = train_time_model(h800.config)(b).total_s();
  EXPECT_NEAR(t800 / t20, 148.0 / 989.0, 1e-12);
  EXPECT_EQ(trainer_accelerator(h800.config).name, "h800");
  EXPECT_EQ(trainer_accelerator(h20.config).name, "h20");
}

// topology.preset=cluster: the trainer's node (GPUs 0-7) links at the H800's
// NVLink (200 GB/s a direction) and NIC, the engines' node at the H20's.
TEST(HeterogeneousPools, TheTrainersNodesCarryItsLinks) {
  april::testing::Fixture f("default", with(kSplit, "train.hardware=h800"));
  const auto h20 = resolve_accelerator("h20"), h800 = resolve_accelerator("h800");
  const auto t = cluster_topology(cluster_shape(f.config), h20, h800);
  for (const auto& l : t.links) {
    if (l.b != "node0-scaleup" && l.b != "node1-scaleup") continue;
    EXPECT_DOUBLE_EQ(l.bytes_s, l.b == "node0-scaleup" ? h800.scale_up_bytes_s : h20.scale_up_bytes_s) << l.a;
  }
  EXPECT_NE(h800.scale_up_bytes_s, h20.scale_up_bytes_s);
}

TEST(HeterogeneousPools, RefusedWhereThePoolsAreOne) {
  april::testing::Fixture colocated("default", {"train.hardware=h800"});
  try {
    (void)scenario::resolve_scenario(colocated.config);
    FAIL();
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cluster.mode is colocated"), std::string::npos) << e.what();
  }
  // GB200 trays hold 4 GPUs, H20 nodes 8: pools of whole nodes need one size.
  april::testing::Fixture trays("default", with(kSplit, "train.hardware=gb200"));
  EXPECT_THROW((void)trainer_accelerator(trays.config), base::ConfigError);
  // A node holds one accelerator: a trainer on another one takes whole nodes.
  april::testing::Fixture shared(
      "default", {"hardware=h20", "cluster.nodes=2", "cluster.mode=disaggregated", "cluster.rollout_gpus=12", "train.hardware=h800"});
  try {
    (void)trainer_accelerator(shared.config);
    FAIL();
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("must be whole nodes of 8"), std::string::npos) << e.what();
  }
  EXPECT_THROW(april::testing::Fixture("default", with(kSplit, "train.hardware=h9000")), base::ConfigError);
  // The engines' own name is the homogeneous cluster, colocated or not.
  april::testing::Fixture same("default", {"train.hardware=h100"});
  EXPECT_EQ(trainer_accelerator(same.config).name, "h100");
}

}  // namespace
}  // namespace april::sim
