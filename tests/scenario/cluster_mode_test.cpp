// Cluster mode (docs/design.md 3b): the GPU split, its errors, and sync, april and
// sorted on a disaggregated cluster, where nothing overlaps and only the GPU
// counts differ; the absolute step times of every mode.
#include <gtest/gtest.h>

#include "rl/metric_columns.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/cluster_topology.hpp"
#include "sim/train_sync_knobs.hpp"
#include "test_support.hpp"

namespace april {
namespace {

std::string shape_error(const std::vector<std::string>& sets) {
  testing::Fixture f("default", sets);
  try {
    (void)sim::cluster_shape(f.config);
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ClusterMode, TheSplitIsDerivedAndChecked) {
  testing::Fixture f("default", {"cluster.mode=disaggregated"});
  auto s = sim::cluster_shape(f.config);  // 8 GPUs at TP 2: half each
  EXPECT_EQ(s.rollout_gpus, 4);
  EXPECT_EQ(s.train_gpus, 4);
  EXPECT_EQ(s.engines, 2);
  testing::Fixture g("default", {"cluster.mode=disaggregated", "cluster.train_gpus=2"});
  s = sim::cluster_shape(g.config);
  EXPECT_EQ(s.rollout_gpus, 6);
  EXPECT_EQ(s.engines, 3);
  testing::Fixture h("handcheck", {"cluster.mode=disaggregated", "cluster.gpus=2"});  // cluster.engines = 1 is set
  s = sim::cluster_shape(h.config);
  EXPECT_EQ(s.rollout_gpus, 1);
  EXPECT_EQ(s.train_gpus, 1);
  testing::Fixture colo("default");
  s = sim::cluster_shape(colo.config);
  EXPECT_FALSE(s.disaggregated());
  EXPECT_EQ(s.train_gpus, 8);
  EXPECT_EQ(s.engines, 4);

  EXPECT_NE(shape_error({"cluster.mode=disaggregated", "cluster.rollout_gpus=6", "cluster.train_gpus=4"})
                .find("cluster.rollout_gpus (6) + cluster.train_gpus (4) must be cluster.gpus (8)"),
            std::string::npos);
  EXPECT_NE(shape_error({"cluster.mode=disaggregated", "cluster.rollout_gpus=8"}).find("cluster.train_gpus (0)"), std::string::npos);
  EXPECT_NE(shape_error({"cluster.mode=disaggregated", "cluster.rollout_gpus=5"})
                .find("cluster.rollout_gpus (5) is not a multiple of cluster.tensor_parallel (2)"),
            std::string::npos);
  EXPECT_NE(shape_error({"cluster.mode=disaggregated", "cluster.engines=3", "cluster.rollout_gpus=4"})
                .find("cluster.engines is 3, but cluster.rollout_gpus (4) / cluster.tensor_parallel (2) makes 2"),
            std::string::npos);
  EXPECT_NE(shape_error({"cluster.rollout_gpus=4"}).find("cluster.rollout_gpus is set (4), but cluster.mode is colocated"),
            std::string::npos);
  EXPECT_NE(shape_error({"cluster.engines=5"}).find("needs 10 GPUs, but cluster.gpus is 8"), std::string::npos);
}

// Disaggregated, sync / april / sorted keep section 3's order: the rollout,
// train and sync times of each step are those of a colocated cluster with the
// same engines, except that train runs on the train GPUs.
TEST(ClusterMode, ColocatedPoliciesOnADisaggregatedClusterDifferOnlyInGpuCounts) {
  for (const std::string policy : {"sync", "april", "sorted"}) {
    // No fixed cost per micro-batch: their count rounds up, so it would not double exactly.
    testing::Fixture colo("default", {"steps=4", "cluster.engines=2", "train.micro_batch_overhead_s=0"});
    testing::Fixture dis("default", {"steps=4", "cluster.mode=disaggregated", "train.micro_batch_overhead_s=0"});
    const auto a = scenario::simulate(colo.config, colo.registry, policy);
    const auto b = scenario::simulate(dis.config, dis.registry, policy);
    ASSERT_EQ(a.steps.size(), b.steps.size());
    for (std::size_t k = 0; k < a.steps.size(); ++k) {
      // Equal up to rounding: the two clocks differ (train times differ), and
      // an abort's time is a difference of absolute times.
      EXPECT_NEAR(a.steps[k].rollout_time_s, b.steps[k].rollout_time_s, 1e-9) << policy << " step " << k;
      EXPECT_EQ(a.steps[k].tokens_generated, b.steps[k].tokens_generated);
      EXPECT_EQ(a.steps[k].tokens_trained, b.steps[k].tokens_trained);
      EXPECT_EQ(a.steps[k].staleness_max, b.steps[k].staleness_max);
      // Phases: the compute phases on half the GPUs take twice as long; colocated adds the offload.
      ASSERT_TRUE(a.steps[k].train_phases && b.steps[k].train_phases);
      const auto& pa = *a.steps[k].train_phases;
      const auto& pb = *b.steps[k].train_phases;
      EXPECT_NEAR(pb.update_s, 2 * pa.update_s, 1e-9 * pb.update_s) << policy << " step " << k;
      EXPECT_NEAR(pb.old_logprob_s, 2 * pa.old_logprob_s, 1e-9 * pb.old_logprob_s) << policy << " step " << k;
      EXPECT_GT(pa.offload_s, 0.0);
      EXPECT_EQ(pb.offload_s, 0.0);  // nothing to move off a trainer that does not share its GPUs
      EXPECT_NEAR(a.steps[k].train_time_s, pa.old_logprob_s + pa.update_s + pa.grad_reduce_s + pa.optimizer_s + pa.offload_s, 1e-6);
      EXPECT_EQ(a.steps[k].gpus, 8);
      EXPECT_EQ(b.steps[k].gpus, 8);
    }
  }
}

// The absolute times of section 3b, colocated: each step starts where the
// previous one's sync ended; train starts when the batch is ready and the
// abort of what is still in flight has taken effect (part of the rollout).
TEST(ClusterMode, StepTimesAreContiguousWhenNothingOverlaps) {
  testing::Fixture f("default", {"steps=5"});
  const auto r = scenario::simulate(f.config, f.registry, "april");
  double prev_sync_end = 0;
  for (const auto& m : r.steps) {
    EXPECT_DOUBLE_EQ(m.start_time_s, prev_sync_end);
    EXPECT_GT(m.abort_time_s, 0.01);  // at least the default latency: APRIL always has requests in flight here
    EXPECT_NEAR(m.batch_ready_s + m.abort_time_s, m.start_time_s + m.rollout_time_s, 1e-9);
    EXPECT_DOUBLE_EQ(m.train_start_s, m.start_time_s + m.rollout_time_s);
    EXPECT_DOUBLE_EQ(m.train_end_s, m.train_start_s + m.train_time_s);
    EXPECT_DOUBLE_EQ(m.sync_end_s, m.train_end_s + m.sync_time_s);
    EXPECT_NEAR(m.step_time_s, m.sync_end_s - m.start_time_s, 1e-9);
    prev_sync_end = m.sync_end_s;
  }
  const auto j = rl::summary_json(r.summary);
  const double total = j["total_time_s"].get<double>();
  EXPECT_NEAR(total, r.steps.back().sync_end_s, 1e-6);
  EXPECT_DOUBLE_EQ(j["step_time_s"].get<double>(), total / 5);
  EXPECT_DOUBLE_EQ(j["gpu_hours"].get<double>(), total * 8 / 3600);
  EXPECT_DOUBLE_EQ(j["trainer_busy_fraction"].get<double>(), r.summary.totals.train_time_s / total);
  EXPECT_DOUBLE_EQ(j["generation_throughput_tok_s"].get<double>(), static_cast<double>(r.summary.totals.tokens_generated) / total);
}

}  // namespace
}  // namespace april

namespace april {
namespace {

// Nodes: the budget is nodes x the accelerator's GPUs per node; engines stay
// inside a node and, split, each pool takes whole nodes.
TEST(ClusterNodes, BudgetPlacementAndPools) {
  testing::Fixture f("default", {"hardware=h20", "cluster.nodes=8", "cluster.engines=32"});
  auto s = sim::cluster_shape(f.config);
  EXPECT_EQ(s.gpus, 64);
  EXPECT_EQ(s.nodes, 8);
  EXPECT_EQ(s.gpus_per_node, 8);
  testing::Fixture split("default", {"hardware=h20", "cluster.nodes=4", "cluster.mode=disaggregated", "cluster.rollout_gpus=16"});
  s = sim::cluster_shape(split.config);
  EXPECT_EQ(s.train_gpus, 16);
  EXPECT_EQ(s.engines, 8);
  EXPECT_NE(shape_error({"cluster.nodes=2", "cluster.gpus=8"}).find("cluster.nodes 2 x 8 GPUs per node makes 16"), std::string::npos);
  EXPECT_NE(shape_error({"cluster.nodes=2", "cluster.tensor_parallel=3", "cluster.engines=1"}).find("neither divides the 8 GPUs"),
            std::string::npos);
  // A split inside a node: the trainer's 4 GPUs, then 6 engines at TP 2 on the
  // rest of node 0 and all of node 1.
  testing::Fixture inside("default", {"cluster.nodes=2", "cluster.mode=disaggregated", "cluster.rollout_gpus=12"});
  s = sim::cluster_shape(inside.config);
  EXPECT_EQ(s.train_gpus, 4);
  EXPECT_EQ(s.engines, 6);
  EXPECT_TRUE(s.trainer_gpu(3));
  EXPECT_FALSE(s.trainer_gpu(4));
  // verl's one-step-off layout: every node 6 trainer GPUs and 2 engine GPUs.
  testing::Fixture verl("default", {"hardware=h20", "cluster.nodes=2", "cluster.mode=disaggregated", "cluster.rollout_gpus=4",
                                    "cluster.split_placement=per_node"});
  s = sim::cluster_shape(verl.config);
  EXPECT_TRUE(s.per_node_split);
  EXPECT_EQ(s.train_gpus, 12);
  EXPECT_TRUE(s.trainer_gpu(5));
  EXPECT_FALSE(s.trainer_gpu(6));
  EXPECT_TRUE(s.trainer_gpu(13));
  EXPECT_FALSE(s.trainer_gpu(15));
  const auto topo = sim::cluster_topology(s, sim::resolve_accelerator("h20"), sim::resolve_accelerator("h20"));
  ASSERT_EQ(topo.engines.size(), 2u);
  EXPECT_EQ(topo.engines[0], (std::vector<std::string>{"node0-gpu6", "node0-gpu7"}));
  EXPECT_EQ(topo.engines[1], (std::vector<std::string>{"node1-gpu6", "node1-gpu7"}));
  EXPECT_NE(shape_error({"cluster.nodes=2", "cluster.mode=disaggregated", "cluster.rollout_gpus=6", "cluster.split_placement=per_node"})
                .find("do not fill inside the node"),
            std::string::npos);
  // A GB200 NVL72 rack: 18 trays of 4.
  testing::Fixture rack("default", {"hardware=gb200", "cluster.nodes=18", "cluster.tensor_parallel=4", "cluster.engines=18"});
  EXPECT_EQ(sim::cluster_shape(rack.config).gpus, 72);
}

// topology.preset=cluster on one node is the single-node preset with the
// accelerator's own NVLink figure; across nodes the NICs bound the sync.
TEST(ClusterNodes, WeightSyncThroughTheClusterTopology) {
  testing::Fixture one("default", {"sync.latency_s=0", "topology.preset=cluster"});
  testing::Fixture preset("default", {"sync.latency_s=0", "topology.preset=single-node"});
  EXPECT_DOUBLE_EQ(sim::weight_sync(one.config).time_s, sim::weight_sync(preset.config).time_s);
  const double weights = 2.0 * 4022468096.0;
  EXPECT_NEAR(sim::weight_sync(one.config).time_s, weights / 450e9, 1e-9);  // the trainer GPU's link carries both TP shards
  // Disaggregated on 2 nodes: the trainer's node, then the engines' node. Every
  // shard crosses a 400 Gb/s NIC (50 GB/s); the engine GPUs' NICs each take one shard.
  testing::Fixture two("default", {"sync.latency_s=0", "topology.preset=cluster", "cluster.nodes=2", "cluster.mode=disaggregated",
                                   "cluster.rollout_gpus=8"});
  const double t = sim::weight_sync(two.config).time_s;
  EXPECT_GE(t, weights / 2 / 50e9 - 1e-9);
  EXPECT_LE(t, weights / 50e9 + 1e-9);
}

}  // namespace
}  // namespace april

namespace april {
namespace {

// The shipped default written out as a scenario file gives the default's run exactly.
TEST(ExampleScenarios, TheQwen3FourBExampleIsTheDefault) {
  testing::Fixture def("default", {"steps=3"});
  testing::Fixture file(std::string(APRIL_EXAMPLES_DIR) + "/qwen3-4b-8xh100.json", {"steps=3"});
  for (const std::string policy : {"sync", "april"}) {
    EXPECT_EQ(scenario::simulate(def.config, def.registry, policy).summary.fingerprint,
              scenario::simulate(file.config, file.registry, policy).summary.fingerprint)
        << policy;
  }
}

}  // namespace
}  // namespace april
