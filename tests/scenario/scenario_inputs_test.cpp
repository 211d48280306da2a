// The model and accelerators resolved once and handed on: copies share the
// resolution, and a run handed inputs of another scenario resolves its own.
#include <gtest/gtest.h>

#include "scenario/design_space.hpp"
#include "scenario/simulation.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/scenario_inputs.hpp"
#include "test_support.hpp"

namespace april {
namespace {

TEST(ScenarioInputs, KnowTheNamesTheyWereResolvedFrom) {
  testing::Fixture f("default", {"cluster.mode=disaggregated", "train.hardware=h800"});
  const sim::ScenarioInputs in(f.config);
  EXPECT_TRUE(in.resolved_from(f.config));
  testing::Fixture split("default", {"cluster.mode=disaggregated", "train.hardware=h800", "cluster.rollout_gpus=6"});
  EXPECT_TRUE(in.resolved_from(split.config));  // other cluster keys, the same inputs
  for (const auto& other : {"model=qwen3-8b", "hardware=h200", "train.hardware=h20"}) {
    testing::Fixture o("default", {"cluster.mode=disaggregated", "train.hardware=h800", other});
    EXPECT_FALSE(in.resolved_from(o.config)) << other;
  }
  EXPECT_EQ(in.engine_hw().name, "h100");
  EXPECT_EQ(in.named_trainer_hw().name, "h800");
  EXPECT_EQ(in.model().name, "qwen3-4b");
  // A copy shares what is resolved: the same objects, not resolved again.
  const sim::ScenarioInputs copy = in;
  EXPECT_EQ(&copy.model(), &in.model());
  EXPECT_EQ(&copy.engine_hw(), &in.engine_hw());
  const auto on_trainer = in.with_engine_hw(in.named_trainer_hw());
  EXPECT_EQ(on_trainer.engine_hw().name, "h800");
  EXPECT_EQ(on_trainer.model().name, "qwen3-4b");
}

TEST(ScenarioInputs, ARunHandedAnotherScenariosInputsResolvesItsOwn) {
  testing::Fixture f("default", {"steps=2"});
  testing::Fixture other("default", {"steps=2", "model=qwen3-8b"});
  const sim::ScenarioInputs theirs(other.config);
  (void)theirs.model();
  const auto alone = scenario::simulate(f.config, f.registry, "april");
  scenario::RunOptions given;
  given.inputs = &theirs;
  EXPECT_EQ(scenario::simulate(f.config, f.registry, "april", given).summary.fingerprint, alone.summary.fingerprint);
  const sim::ScenarioInputs own(f.config);
  given.inputs = &own;
  EXPECT_EQ(scenario::simulate(f.config, f.registry, "april", given).summary.fingerprint, alone.summary.fingerprint);
}

TEST(ScenarioInputs, ASplitSearchOnGivenInputsIsTheSame) {
  testing::Fixture f("default", {"steps=2"});
  const auto alone = scenario::fastest_split(f.config, f.registry, "async");
  const sim::ScenarioInputs in(f.config);
  scenario::RunOptions given;
  given.inputs = &in;
  const auto s = scenario::fastest_split(f.config, f.registry, "async", given);
  EXPECT_EQ(s.best, alone.best);
  EXPECT_EQ(s.run.summary.fingerprint, alone.run.summary.fingerprint);
  const auto shape = sim::cluster_shape(scenario::on_split(f.config, s.trials[s.best].rollout_gpus));
  EXPECT_EQ(s.shape.rollout_gpus, shape.rollout_gpus);
  EXPECT_EQ(s.shape.train_gpus, shape.train_gpus);
  EXPECT_EQ(s.shape.engines, shape.engines);
}

}  // namespace
}  // namespace april
