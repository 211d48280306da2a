// Elastic splits (policies/elastic_policy, verl PR #7373) worked by hand on
// a disaggregated `handcheck` cluster: one rollout engine (1 GPU, at most
// one running request) and a trainer on 1 GPU, which holds one hybrid
// engine of the same kind. 1 ms per iteration, prefill included; a train
// step takes 3 ms and a sync 2 ms; the switch to rollout and the switch back
// 1 ms each unless a test says otherwise. async, eta = 0, B = 2 groups of one
// 5-token sample: each version submits two groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/chrome_trace.hpp"
#include "policies/elastic_policy.hpp"
#include "rl/run_timeline.hpp"
#include "rl/step_metrics.hpp"
#include "test_support.hpp"

namespace april {
namespace {

testing::Fixture elastic_handcheck(const std::vector<std::string>& more) {
  std::vector<std::string> sets = {
      "cluster.mode=disaggregated", "cluster.gpus=2",        "rollout_batch_size=2", "engine.max_running=1", "train.time_model=linear",
      "train.linear_base_s=0.003",  "sync.time_model=fixed", "sync.latency_s=0.002", "async.eta=0",          "elastic.to_rollout_s=0.001",
      "elastic.to_trainer_s=0.001"};
  sets.insert(sets.end(), more.begin(), more.end());
  return testing::Fixture("handcheck", sets);
}

struct Times {
  double train_start_ms, train_end_ms, sync_end_ms;
  std::int64_t tokens_generated;
};

void expect_times(const std::string& policy, const std::vector<std::string>& sets, const std::vector<Times>& want) {
  for (const bool ff : {true, false}) {
    auto f = elastic_handcheck(sets);
    f.config.set_from_text("engine.fast_forward", ff ? "true" : "false", "test");
    scenario::Simulation sim(f.config, f.registry, policy, testing::five_token_groups());
    for (std::size_t k = 0; k < want.size(); ++k) {
      const auto m = sim.step();
      const std::string at = policy + " step " + std::to_string(k) + (ff ? " (fast-forward)" : " (per iteration)");
      EXPECT_NEAR(m.train_start_s, want[k].train_start_ms * 1e-3, 1e-12) << at;
      EXPECT_NEAR(m.train_end_s, want[k].train_end_ms * 1e-3, 1e-12) << at;
      EXPECT_NEAR(m.sync_end_s, want[k].sync_end_ms * 1e-3, 1e-12) << at;
      EXPECT_EQ(m.tokens_generated, want[k].tokens_generated) << at;
      EXPECT_EQ(m.tokens_trained, 10) << at;
      EXPECT_EQ(m.staleness_max, 0) << at;
    }
    const auto& loop = sim.loop();
    EXPECT_EQ(loop.total_generated_tok(), loop.total_trained_tok() + loop.buffered_tok() + loop.total_wasted_tok()) << policy;
  }
}

// Without a lend the engine serves the two groups in turn: g0 0-5, g1 5-10,
// train 10-13, sync 13-15; then g2 15-20, g3 20-25, train 25-28, sync 28-30.
TEST(Elastic, WithoutALendTheEngineServesTheGroupsInTurn) { expect_times("async", {}, {{10, 13, 15, 10}, {25, 28, 30, 10}}); }

// ratio 1 (reclaim at 2 groups queued). At 0 the idle trainer lends its GPU
// (the queue, empty, is short of 2): g0 goes to the engine (0-5), g1 to the
// hybrid engine, which starts it once lent at 1 (1-6). At 6 both are queued:
// reclaim 6-7, train 7-10, sync 10-12. At 12 (v1) the same: g2 12-17, g3
// 13-18, reclaim 18-19, train 19-22, sync 22-24.
TEST(Elastic, TheIdleTrainersGpuServesUntilTheThresholdIsQueued) {
  expect_times("elastic", {"elastic.threshold_ratio=1", "elastic.adaptive=false"}, {{7, 10, 12, 10}, {19, 22, 24, 10}});
}

// ratio 0.5 (reclaim at 1 group). At 5 g0 is queued: the trainer takes its
// GPU back; g1 has 4 tokens there (1-5) and goes to the engine with them,
// which is free at 5: it re-prefills them and makes its last token 5-6. The
// trainer is back at 6, when g1 completes the batch: train 6-9, sync 9-11.
// At 11: g2 11-16, g3 on the hybrid 12-16 (4 tokens), moved, 16-17; train
// 17-20, sync 20-22.
TEST(Elastic, AReclaimMovesTheHybridEnginesRequestsWithTheirTokens) {
  expect_times("elastic", {"elastic.threshold_ratio=0.5", "elastic.adaptive=false"}, {{6, 9, 11, 10}, {17, 20, 22, 10}});
}

// The time the trainer's GPUs are away, from each lend's start to its
// reclaim's end, in the windows of the two tests above: 0-7 of 0-12 and 12-19
// of 12-24 at ratio 1; 0-6 of 0-11 and 11-17 of 11-22 at ratio 0.5; none
// without a lend.
TEST(Elastic, StepsReportTheTimeTheTrainersGpusWereLent) {
  struct Case {
    std::string policy;
    std::vector<std::string> sets;
    double lent_ms, window_ms;
  };
  for (const auto& c : {Case{"elastic", {"elastic.threshold_ratio=1", "elastic.adaptive=false"}, 7, 12},
                        Case{"elastic", {"elastic.threshold_ratio=0.5", "elastic.adaptive=false"}, 6, 11}, Case{"async", {}, 0, 15}}) {
    auto f = elastic_handcheck(c.sets);
    scenario::Simulation sim(f.config, f.registry, c.policy, testing::five_token_groups());
    for (int k = 0; k < 2; ++k) {
      const auto m = sim.step();
      EXPECT_NEAR(m.trainer_lent_s, c.lent_ms * 1e-3, 1e-12) << c.policy << " step " << k;
      EXPECT_NEAR(rl::derive(m).trainer_lent_fraction, c.lent_ms / c.window_ms, 1e-9) << c.policy << " step " << k;
    }
  }
}

double ratio_after(const std::vector<std::string>& sets, int steps) {
  auto f = elastic_handcheck(sets);
  scenario::Simulation sim(f.config, f.registry, "elastic", testing::five_token_groups());
  for (int s = 0; s < steps; ++s) (void)sim.step();
  return dynamic_cast<const policies::ElasticPolicy&>(sim.policy()).threshold_ratio();
}

// Calm steps (the trainer back with B queued, as in the test above at ratio
// 1) lower the ratio by 0.03 every two; idle ones (back at 5.5 with the
// switch at 0.5 ms, g1 still on the engine until 6) raise it by 0.05 every two.
TEST(Elastic, TheRatioFallsAfterCalmStepsAndRisesAfterIdleOnes) {
  EXPECT_NEAR(ratio_after({"elastic.threshold_ratio=1"}, 4), 0.94, 1e-12);
  EXPECT_NEAR(ratio_after({"elastic.threshold_ratio=0.5", "elastic.to_trainer_s=0.0005"}, 4), 0.6, 1e-12);
  EXPECT_NEAR(ratio_after({"elastic.threshold_ratio=0.5", "elastic.to_trainer_s=0.0005", "elastic.adaptive=false"}, 4), 0.5, 1e-12);
}

TEST(Elastic, ARunOnTheDefaultScenarioLendsAndGainsOverAsync) {
  const std::vector<std::string> sets = {"cluster.mode=disaggregated", "cluster.rollout_gpus=4", "cluster.train_gpus=4", "steps=6"};
  testing::Fixture f("default", sets);
  const auto async = scenario::simulate(f.config, f.registry, "async");
  const auto elastic = scenario::simulate(f.config, f.registry, "elastic");
  // The trainer is busy about 40% of the wall time under async here: its
  // GPUs rolling out meanwhile shorten the steps.
  ASSERT_EQ(elastic.steps.size(), 6U);
  EXPECT_LT(elastic.summary.totals.step_time_s, async.summary.totals.step_time_s * 0.98);
}

// The hybrid engine draws as its own track, after the rollout engine's, at
// every detail (its windows and changes carry its index, 1 here).
TEST(Elastic, TheTrainersEngineHasATrackInTheTimeline) {
  auto f = elastic_handcheck({"elastic.threshold_ratio=0.5"});
  scenario::RunOptions o = testing::five_token_groups();
  o.record_timeline = true;
  o.record_windows = true;
  f.config.set_from_text("steps", "2", "test");
  const auto r = scenario::simulate(f.config, f.registry, "elastic", o);
  EXPECT_EQ(r.hybrid_engines, 1);
  for (const auto detail : {rl::TimelineDetail::kSteps, rl::TimelineDetail::kChanges, rl::TimelineDetail::kWindows}) {
    base::ChromeTrace trace;
    rl::RunTimeline run{"elastic", 1, &r.steps, &r.timeline};
    run.engine_windows = &r.windows;
    run.hybrid_engines = r.hybrid_engines;
    rl::add_run_timeline(trace, run, 1, detail);
    EXPECT_NE(trace.text().find("engine 1 (trainer GPUs)"), std::string::npos);
  }
  // g1 ran 1-5 on it in each of the two steps' lends: windows of engine 1.
  const auto on_hybrid = std::count_if(r.windows.begin(), r.windows.end(), [](const auto& w) { return w.engine == 1; });
  EXPECT_GE(on_hybrid, 2);
}

TEST(Elastic, NeedsATrainerThatHoldsAnEngine) {
  testing::Fixture f("default", {"cluster.mode=disaggregated", "cluster.gpus=8", "cluster.rollout_gpus=7", "cluster.train_gpus=1",
                                 "cluster.tensor_parallel=1"});
  EXPECT_NO_THROW(scenario::Simulation(f.config, f.registry, "elastic"));
  testing::Fixture g("default", {"cluster.mode=disaggregated", "cluster.rollout_gpus=4", "cluster.train_gpus=4", "model=qwen3-30b-a3b",
                                 "cluster.tensor_parallel=2", "hardware=h200", "train.hardware=h100", "engine.gpu_memory_fraction=0.3"});
  try {
    scenario::Simulation sim(g.config, g.registry, "elastic");
    FAIL() << "elastic built engines that do not fit";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("an engine on the trainer's GPUs"), std::string::npos) << e.what();
  }
}

// The switch moves the trainer's state per GPU, which its layout decides:
// one that does not divide the trainer's GPUs is refused by name, whatever
// train-time model (the linear one reads no layout).
TEST(Elastic, TheSwitchNeedsATrainerLayoutThatDividesItsGpus) {
  testing::Fixture f("default", {"cluster.mode=disaggregated", "cluster.rollout_gpus=4", "cluster.train_gpus=4", "train.time_model=linear",
                                 "train.tensor_parallel=8"});
  try {
    scenario::Simulation sim(f.config, f.registry, "elastic");
    FAIL() << "elastic modelled a switch for a layout that does not place";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.tensor_parallel 8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace april
