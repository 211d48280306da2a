// Runs kept between a race's rungs (studies/paused_runs): a run that goes on
// from a kept one is the longer run, step for step, and a kept run is never
// continued as another scenario's.
#include "studies/paused_runs.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "base/run_keys.hpp"
#include "rl/metric_columns.hpp"
#include "studies/run_batch.hpp"
#include "test_support.hpp"

namespace april {
namespace {

studies::RunContext context_of(const testing::Fixture& f) {
  return studies::RunContext{&f.registry, std::nullopt, "", studies::trace_hash(std::nullopt)};
}

std::string without_wall_time(const rl::RunSummary& s) {
  auto j = rl::summary_json(s);
  j.erase("wall_time_s");
  return j.dump();
}

// Every overlapping and colocated kind of loop, and a run the staleness stop ends.
TEST(PausedRuns, ARunGoneOnFromItsFirstStepsIsTheLongerRun) {
  struct Case {
    std::string policy;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases = {
      {"sync", {}},
      {"april", {}},
      {"laminar", {"cluster.mode=disaggregated", "cluster.train_gpus=2"}},
      {"async", {"cluster.mode=disaggregated", "cluster.train_gpus=2", "stop_after_staleness_above=0"}},
  };
  for (const auto& c : cases) {
    testing::Fixture f("default", c.sets);
    f.config.set(base::keys::kSteps, std::int64_t{12}, "test");
    const auto whole = scenario::simulate(f.config, f.registry, c.policy);
    scenario::Simulation sim(f.config, f.registry, c.policy);
    const auto first = sim.run_to(3);
    const auto rest = sim.run_to(12);
    ASSERT_LE(first.steps.size(), 3U) << c.policy;
    EXPECT_EQ(rl::steps_csv(rest.steps), rl::steps_csv(whole.steps)) << c.policy;
    EXPECT_EQ(without_wall_time(rest.summary), without_wall_time(whole.summary)) << c.policy;
  }
}

TEST(PausedRuns, AnExecutorGoesOnFromAKeptRunAndCountsItsEarlierSteps) {
  testing::Fixture f;
  f.config.set(base::keys::kSteps, std::int64_t{10}, "test");
  const auto context = context_of(f);
  const auto whole = studies::simulate_run({{}, "april", f.config}, context);
  ASSERT_EQ(whole.status, "done") << whole.error;

  studies::PausedRuns paused(1e12);
  studies::RunSpec first{{}, "april", f.config};
  first.config.set(base::keys::kSteps, std::int64_t{4}, "test");
  first.pause_as = "p";
  const auto head = studies::simulate_run(first, context, &paused);
  ASSERT_EQ(head.status, "done") << head.error;
  EXPECT_EQ(head.steps.size(), 4U);
  EXPECT_EQ(paused.size(), 1U);

  studies::RunSpec longer{{}, "april", f.config};
  longer.resume = "p";
  const auto went_on = studies::simulate_run(longer, context, &paused);
  ASSERT_EQ(went_on.status, "done") << went_on.error;
  EXPECT_EQ(went_on.steps_before, 4);
  EXPECT_EQ(paused.size(), 0U);
  EXPECT_EQ(went_on.run_key, whole.run_key);
  EXPECT_EQ(rl::steps_csv(went_on.steps), rl::steps_csv(whole.steps));

  // Nothing kept under the name: the run starts over, to the same steps.
  const auto fresh = studies::simulate_run(longer, context, &paused);
  EXPECT_EQ(fresh.steps_before, 0);
  EXPECT_EQ(rl::steps_csv(fresh.steps), rl::steps_csv(whole.steps));
}

TEST(PausedRuns, ARunPastTheBudgetIsNotKept) {
  testing::Fixture f;
  f.config.set(base::keys::kSteps, std::int64_t{2}, "test");
  studies::PausedRuns paused(1.0);  // one byte
  studies::RunSpec spec{{}, "sync", f.config};
  spec.pause_as = "p";
  const auto rec = studies::simulate_run(spec, context_of(f), &paused);
  ASSERT_EQ(rec.status, "done") << rec.error;
  EXPECT_EQ(paused.size(), 0U);
}

TEST(PausedRuns, AKeptRunIsNotContinuedAsAnotherScenario) {
  testing::Fixture f;
  f.config.set(base::keys::kSteps, std::int64_t{2}, "test");
  studies::PausedRuns paused(1e12);
  studies::RunSpec spec{{}, "sync", f.config};
  spec.pause_as = "p";
  ASSERT_EQ(studies::simulate_run(spec, context_of(f), &paused).status, "done");
  studies::RunSpec other{{}, "sync", f.config};
  other.config.set(base::keys::kSeed, std::int64_t{99}, "test");
  other.resume = "p";
  const auto rec = studies::simulate_run(other, context_of(f), &paused);
  EXPECT_EQ(rec.status, "failed");
  EXPECT_EQ(rec.error, "PausedRuns: the run kept as 'p' was built from another scenario");
}

}  // namespace
}  // namespace april
