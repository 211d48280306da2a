// Designs on one GPU budget: the splits a search tries, the `design` grid key,
// what is no design, and the split search `april simulate` runs for an
// overlapping policy on a colocated scenario.
#include <gtest/gtest.h>

#include "scenario/design_space.hpp"
#include "sim/cluster_shape.hpp"
#include "test_support.hpp"

namespace april {
namespace {

TEST(DesignSpace, SplitCandidatesAreWholeEnginesWithATrainGpu) {
  testing::Fixture f("default");  // 8 GPUs at TP 2
  EXPECT_EQ(scenario::split_candidates(f.config), (std::vector<std::int64_t>{2, 4, 6}));
  // On several nodes each pool takes whole nodes: 64 nodes of 8 make 63 splits, 16 kept evenly.
  testing::Fixture wide("default", {"cluster.nodes=64", "cluster.tensor_parallel=1"});
  const auto c = scenario::split_candidates(wide.config);
  ASSERT_EQ(c.size(), 16U);
  EXPECT_EQ(c.front(), 8);
  EXPECT_EQ(c.back(), 504);
  EXPECT_TRUE(std::is_sorted(c.begin(), c.end()));
  EXPECT_EQ(scenario::split_candidates(wide.config, 100).size(), 63U);
  testing::Fixture two_nodes("default", {"cluster.gpus=16"});
  EXPECT_EQ(scenario::split_candidates(two_nodes.config), (std::vector<std::int64_t>{8}));
  testing::Fixture tiny("default", {"cluster.gpus=2", "cluster.engines=1"});  // TP 2: one engine takes every GPU
  EXPECT_TRUE(scenario::split_candidates(tiny.config).empty());
}

TEST(DesignSpace, SplitCandidatesLeaveTheTrainerAShareItsLayoutDivides) {
  // The DeepSeek-V3 example: 32 nodes of 8 H800, engines of 64 GPUs, a trainer
  // of TP 8 x PP 4 x CP 4 = 128 GPUs. Only a 128-GPU trainer fits: a search over
  // every whole-engine split would have run a 192-GPU one and stopped on its error.
  const auto c = scenario::split_candidates(testing::Fixture(APRIL_EXAMPLES_DIR "/deepseek-v3-256xh800.json").config);
  EXPECT_EQ(c, (std::vector<std::int64_t>{128}));
  // FSDP shards over 4 GPUs on 8 single-GPU engines: the trainer takes 4.
  testing::Fixture fsdp("default", {"train.time_model=phases", "train.framework=fsdp", "train.fsdp_shard_gpus=4",
                                    "cluster.tensor_parallel=1", "model=qwen3-4b", "hardware=h100"});
  EXPECT_EQ(scenario::split_candidates(fsdp.config), (std::vector<std::int64_t>{4}));
}

std::string design_error(const std::string& design) {
  testing::Fixture f("default");
  try {
    scenario::apply_design(f.config, design, "--vary");
    (void)sim::cluster_shape(f.config);
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(DesignSpace, DesignKeySetsModeAndSplit) {
  testing::Fixture f("default", {"cluster.engines=4"});  // set explicitly: a split must clear it
  scenario::apply_design(f.config, "6+2", "--vary");
  auto s = sim::cluster_shape(f.config);
  EXPECT_TRUE(s.disaggregated());
  EXPECT_EQ(s.rollout_gpus, 6);
  EXPECT_EQ(s.train_gpus, 2);
  EXPECT_EQ(s.engines, 3);
  scenario::apply_design(f.config, "colocated", "--vary");
  s = sim::cluster_shape(f.config);  // the split is cleared with the mode
  EXPECT_FALSE(s.disaggregated());
  EXPECT_EQ(s.train_gpus, 8);

  for (const std::string bad : {"6+", "+2", "x+2", "0+8", "6+2+1", "six", "6-2", "coloc"}) {
    EXPECT_NE(design_error(bad).find("--vary: design '" + bad + "': expected colocated or R+T"), std::string::npos) << bad;
  }
  EXPECT_NE(design_error("5+3").find("cluster.rollout_gpus (5) is not a multiple of cluster.tensor_parallel (2)"), std::string::npos);
  EXPECT_NE(design_error("4+2").find("must be cluster.gpus (8)"), std::string::npos);
}

TEST(DesignSpace, NoDesignSaysWhy) {
  testing::Fixture colo("default");
  EXPECT_FALSE(scenario::not_a_design(colo.config, colo.registry, "april"));
  const auto why = scenario::not_a_design(colo.config, colo.registry, "async");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("async overlaps rollout and training"), std::string::npos);
  EXPECT_TRUE(scenario::not_a_design(colo.config, colo.registry, "one_step_off"));
  testing::Fixture split("default", {"cluster.rollout_gpus=6"});  // colocated, given a split
  EXPECT_NE(scenario::not_a_design(split.config, split.registry, "sync")->find("no rollout/train split"), std::string::npos);
  testing::Fixture dis("default", {"cluster.mode=disaggregated"});
  for (const auto& p : dis.registry.names()) EXPECT_FALSE(scenario::not_a_design(dis.config, dis.registry, p)) << p;
}

// The search tries every split, keeps the fastest, and reports exactly the
// run a user gets by asking for that split.
TEST(DesignSpace, FastestSplitIsTheLeastStepTimeAndReproducible) {
  testing::Fixture f("default", {"steps=4"});
  const auto s = scenario::fastest_split(f.config, f.registry, "async");
  ASSERT_EQ(s.trials.size(), 3U);
  for (std::size_t i = 0; i < s.trials.size(); ++i) {
    EXPECT_EQ(s.trials[i].rollout_gpus, 2 * static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(s.trials[i].rollout_gpus + s.trials[i].train_gpus, 8);
    EXPECT_LE(s.trials[s.best].step_time_s, s.trials[i].step_time_s);
  }
  const auto direct = scenario::simulate(scenario::on_split(f.config, s.trials[s.best].rollout_gpus), f.registry, "async");
  EXPECT_EQ(direct.summary.fingerprint, s.run.summary.fingerprint);
  EXPECT_DOUBLE_EQ(rl::derive(direct.summary.totals).total_time_s / 4.0, s.trials[s.best].step_time_s);
  // Trials differ: the split matters, so the choice is not a tie broken by order.
  EXPECT_NE(s.trials.front().step_time_s, s.trials.back().step_time_s);

  testing::Fixture one("handcheck");  // 1 GPU: no split
  try {
    (void)scenario::fastest_split(one.config, one.registry, "async");
    ADD_FAILURE() << "no error";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("leaves no split"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace april
