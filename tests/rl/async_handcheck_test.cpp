// Overlapping policies on a disaggregated `handcheck` cluster, worked by hand
// (docs/design.md 3b). One engine (1 GPU) and a trainer (1 GPU); 1 ms per
// iteration, prefill included (the constant model); a train step takes 3 ms
// (train.time_model=linear, train.linear_base_s) and a sync 2 ms
// (sync.time_model=fixed). B = 1 group of one 5-token sample, every group the
// same, so a group alone on the engine takes 5 ms.
#include <gtest/gtest.h>

#include "rl/step_metrics.hpp"
#include "test_support.hpp"

namespace april {
namespace {

struct Expected {
  double start_ms, batch_ready_ms, train_start_ms, train_end_ms, sync_end_ms;
  std::int64_t staleness_sum, staleness_max, tokens_generated;
};

testing::Fixture disaggregated_handcheck(const std::vector<std::string>& more = {}) {
  std::vector<std::string> sets = {"cluster.mode=disaggregated", "cluster.gpus=2",        "rollout_batch_size=1", "train.time_model=linear",
                                   "train.linear_base_s=0.003",  "sync.time_model=fixed", "sync.latency_s=0.002"};
  sets.insert(sets.end(), more.begin(), more.end());
  return testing::Fixture("handcheck", sets);
}

void expect_steps(const std::string& policy, const std::vector<std::string>& sets, const std::vector<Expected>& want,
                  std::int64_t tokens_trained = 5) {
  for (const bool ff : {true, false}) {
    auto f = disaggregated_handcheck(sets);
    f.config.set_from_text("engine.fast_forward", ff ? "true" : "false", "test");
    scenario::Simulation sim(f.config, f.registry, policy, testing::five_token_groups());
    for (std::size_t k = 0; k < want.size(); ++k) {
      const auto m = sim.step();
      const auto& w = want[k];
      const std::string at = policy + " step " + std::to_string(k) + (ff ? " (fast-forward)" : " (per iteration)");
      EXPECT_EQ(m.step, static_cast<std::int64_t>(k)) << at;
      EXPECT_NEAR(m.start_time_s, w.start_ms * 1e-3, 1e-12) << at;
      EXPECT_NEAR(m.batch_ready_s, w.batch_ready_ms * 1e-3, 1e-12) << at;
      EXPECT_NEAR(m.train_start_s, w.train_start_ms * 1e-3, 1e-12) << at;
      EXPECT_NEAR(m.train_end_s, w.train_end_ms * 1e-3, 1e-12) << at;
      EXPECT_NEAR(m.sync_end_s, w.sync_end_ms * 1e-3, 1e-12) << at;
      EXPECT_NEAR(m.step_time_s, (w.sync_end_ms - w.start_ms) * 1e-3, 1e-12) << at;
      EXPECT_EQ(m.tokens_trained, tokens_trained) << at;
      EXPECT_EQ(m.staleness_token_sum, static_cast<double>(w.staleness_sum)) << at;
      EXPECT_EQ(m.staleness_max, w.staleness_max) << at;
      EXPECT_EQ(m.tokens_generated, w.tokens_generated) << at;
    }
    // Conservation: every reported token is trained, held or wasted.
    const auto& loop = sim.loop();
    EXPECT_EQ(loop.total_generated_tok(), loop.total_trained_tok() + loop.buffered_tok() + loop.total_wasted_tok()) << policy;
  }
}

// sync on a disaggregated cluster: nothing overlaps. Step k: rollout
// 10k..10k+5, train +5..+8, sync +8..+10.
TEST(AsyncHandcheck, SyncTakesTurnsOnADisaggregatedCluster) {
  expect_steps("sync", {},
               {{0, 5, 5, 8, 10, 0, 0, 5}, {10, 15, 15, 18, 20, 0, 0, 5}, {20, 25, 25, 28, 30, 0, 0, 5}, {30, 35, 35, 38, 40, 0, 0, 5}});
}

// async with eta = 0 is sync on a disaggregated cluster: B groups per version.
TEST(AsyncHandcheck, AsyncWithEtaZeroIsSync) {
  expect_steps("async", {"async.eta=0"},
               {{0, 5, 5, 8, 10, 0, 0, 5}, {10, 15, 15, 18, 20, 0, 0, 5}, {20, 25, 25, 28, 30, 0, 0, 5}, {30, 35, 35, 38, 40, 0, 0, 5}});
}

// one_step_off:
//   0: g0 rolls out 0-5 (v0). At 5 batch 0 trains 5-8 and g1 rolls out 5-10 (v0).
//      At 10 the rollout is done and the trainer idle: sync 10-12.        step 0 ends at 12
//   1: at 12 g1 trains 12-15 (v0 tokens at version 1: staleness 1 x 5); g2 rolls out
//      12-17 (v1); sync 17-19.                                             step 1 ends at 19
//   2: g2 trains 19-22 (staleness 1); g3 19-24; sync 24-26.                step 2 ends at 26
//   3: g3 trains 26-29; g4 26-31; sync 31-33.                              step 3 ends at 33
// Tokens are counted in the window in which their sample finished: g0 and g1
// in step 0, then one group per step.
TEST(AsyncHandcheck, OneStepOffTrainsEachBatchOneVersionLate) {
  expect_steps("one_step_off", {},
               {{0, 5, 5, 8, 12, 0, 0, 10}, {12, 10, 12, 15, 19, 5, 1, 5}, {19, 17, 19, 22, 26, 5, 1, 5}, {26, 24, 26, 29, 33, 5, 1, 5}});
}

// one_step_off on a shared host: iterations that start while a train step
// computes take 2 ms (engine.slowdown_beside_train=2), and a train step
// progresses 1.5 times slower while the engine runs requests (here all along:
// 1.5 x 3 = 4.5 ms).
//   0: g0 rolls out 0-5 alone (nothing trains). At 5 g1 is submitted and batch 0
//      trains 5-9.5; g1's iterations start at 5, 7 and 9 (slow: the step computes
//      until 9.5), then 11 and 12 (fast): g1 ends at 13; sync 13-15.      step 0 ends at 15
//   1: at 15 g2 is submitted and g1 trains 15-19.5 (staleness 1 x 5); g2's iterations
//      start at 15, 17, 19 (slow), 21, 22: it ends at 23; sync 23-25.     step 1 ends at 25
TEST(AsyncHandcheck, ASharedHostSlowsTheEngineBesideATrainStepAndTheTrainStepBesideTheEngine) {
  expect_steps("one_step_off", {"engine.slowdown_beside_train=2", "train.slowdown_beside_engines=1.5"},
               {{0, 5, 5, 9.5, 15, 0, 0, 10}, {15, 13, 15, 19.5, 25, 5, 1, 5}});
}

// A train step runs at half speed only while the engine runs requests
// (train.slowdown_beside_engines=2): at 5 batch 0 trains while g1 rolls out
// 5-10, 2.5 of its 3 ms of work by 10; the engine idles then, and the last
// 0.5 ms run at full speed: the step ends at 10.5; sync 10.5-12.5.
//   1: g1 trains from 12.5 while g2 rolls out 12.5-17.5; ends 18; sync 18-20.
TEST(AsyncHandcheck, ATrainStepSpeedsUpWhenTheEngineIdles) {
  expect_steps("one_step_off", {"train.slowdown_beside_engines=2"}, {{0, 5, 5, 10.5, 12.5, 0, 0, 10}, {12.5, 10, 12.5, 18, 20, 5, 1, 5}});
}

// A train step handed to the trainer (train.handoff_s = 1 ms) computes only
// after the handoff, and the handoff is not slowed by the engine (here
// train.slowdown_beside_engines = 2):
//   0: at 5 batch 0 is handed over 5-6 while g1 rolls out 5-10; it computes at
//      half speed 6-10 (2 of its 3 ms of work), then alone 10-11; sync 11-13.
//   1: g1 is handed over 13-14 while g2 rolls out 13-18; half speed 14-18, alone
//      18-19; sync 19-21.
TEST(AsyncHandcheck, ATrainStepComputesAfterItsHandoff) {
  expect_steps("one_step_off", {"train.slowdown_beside_engines=2", "train.handoff_s=0.001"},
               {{0, 5, 5, 11, 13, 0, 0, 10}, {13, 10, 13, 19, 21, 5, 1, 5}});
}

// async, eta = 1 (room = (v + 2) x B - submitted), recompute at a version change:
//   0: v0, room 2: g0 and g1 run together 0-5. At 5 g0 trains 5-8 (g1 queues);
//      sync 8-10.                                                          step 0 ends at 10
//   1: at 10, v1, room 3 - 2 = 1: g2 starts (v1); g1 trains 10-13 (staleness 1 x 5).
//      At 13 an iteration ends, the train step ends and the sync starts: the engine
//      is at its boundary and starts nothing until the sync ends (docs/design.md 3b, one
//      instant), so g2 holds 3 tokens; sync 13-15.                        step 1 ends at 15
//   2: at 15, v2, room 4 - 3 = 1: g3 starts; g2 drops its KV and re-prefills, the
//      prefill pass yields its 4th token (v2) at 16 and the 5th at 17. g2 trains 17-20:
//      3 tokens of v1 and 2 of v2 at version 2: staleness sum 3, max 1. g3 (tokens at
//      16-20, v2) finishes at 20, as the train step ends; sync 20-22.      step 2 ends at 22
//   3: at 22, v3, room 5 - 4 = 1: g4 starts; g3 trains 22-25 (5 tokens of v2 at
//      version 3: staleness 5, max 1); sync 25-27.                         step 3 ends at 27
// Windows: step 0 reports g0, g1 (10 tokens); step 1 none (g2 still running);
// step 2 g2 and g3; step 3 none (g4 is paused at 25-27 with 3 tokens).
TEST(AsyncHandcheck, AsyncWithEtaOneOverlapsAndReportsStaleness) {
  expect_steps("async", {"async.eta=1"},
               {{0, 5, 5, 8, 10, 0, 0, 10}, {10, 5, 10, 13, 15, 5, 1, 0}, {15, 17, 17, 20, 22, 3, 1, 10}, {22, 20, 22, 25, 27, 5, 1, 0}});
}

// eta = 2: room (v + 3) x B. 0: g0, g1, g2 together 0-5; g0 trains 5-8, sync 8-10.
//   1: v1, room 4 - 3 = 1: g3 (v1) 10-; g1 trains 10-13 (staleness 1); sync 13-15 (g3 holds 3 at 13).
//   2: v2, room 5 - 4 = 1: g4; g2 trains 15-18 (v0 tokens at version 2: staleness 2 x 5); g3 re-prefills
//      at 15 and ends at 17 (3 v1 + 2 v2 tokens); g4 runs 15-; sync 18-20 (g4 holds 3 at 18).
//                                                                          step 2 ends at 20
//   3: v3, room 6 - 5 = 1: g5; g3 trains 20-23 at version 3: 3 x 2 + 2 x 1 = 8, max 2.
// Windows: step 0: g0-g2 (15 tokens); 1: none; 2: g3 (5); 3: g4 (re-prefilled at 20, done at 22).
TEST(AsyncHandcheck, AsyncWithEtaTwoLetsTokensAgeTwoVersions) {
  expect_steps("async", {"async.eta=2"},
               {{0, 5, 5, 8, 10, 0, 0, 15}, {10, 5, 10, 13, 15, 5, 1, 0}, {15, 5, 15, 18, 20, 10, 2, 5}, {20, 17, 20, 23, 25, 8, 2, 5}});
}

// keep_kv (PipelineRL): no re-prefill at a version change; with a constant
// iteration time the timeline equals recompute's, but no prefill is paid.
TEST(AsyncHandcheck, KeepKvPaysNoPrefillAtAVersionChange) {
  auto recompute = disaggregated_handcheck({"async.eta=1"});
  auto keep = disaggregated_handcheck({"async.eta=1", "async.on_update=keep_kv"});
  scenario::Simulation a(recompute.config, recompute.registry, "async", testing::five_token_groups());
  scenario::Simulation b(keep.config, keep.registry, "async", testing::five_token_groups());
  for (int k = 0; k < 4; ++k) {
    const auto ma = a.step(), mb = b.step();
    EXPECT_DOUBLE_EQ(ma.sync_end_s, mb.sync_end_s);
    EXPECT_EQ(ma.staleness_token_sum, mb.staleness_token_sum);
  }
  EXPECT_GT(a.backend().counters().prefill_tok, b.backend().counters().prefill_tok);
}

// laminar (Laminar's relays; one engine's batch is one group here): the
// trainer publishes in 2 ms (the sync time) while the engine goes on, and the
// engine pulls in 1 ms (sync.relay_pull_s) when its batch is done and the
// relays hold a newer version. At one instant, completions come before a
// publish's end (docs/design.md 3b), so an engine done at that instant goes on
// with the version it holds.
//   0: g0 (v0) 0-5; g0 trains 5-8 and g1 (v0: nothing newer) runs 5-10;
//      publish 8-10.                                                       step 0 ends at 10
//   1: at 10 g1 is done, before the publish's end: g2 starts with v0, 10-15;
//      then v1 is out and g1 trains 10-13 (staleness 1 x 5); publish 13-15.
//   2: at 15 g2 is done and v1 is newer: the engine pulls 15-16 and gets v2,
//      out at 15; g3 (v2) 16-21. g2 trains 15-18 (v0 at version 2: 2 x 5);
//      publish 18-20.
//   3: at 21 g3 is done: it trains 21-24 (v2 at version 3: 1 x 5); the engine
//      pulls v3 21-22; g4 (v3) 22-27; publish 24-26.
//   4: at 27 g4 trains 27-30 (1 x 5); pull 27-28; g5 28-33; publish 30-32.
// No sample mixes versions: every staleness is a group's, 5 tokens at a time.
TEST(AsyncHandcheck, LaminarEnginesPullBetweenTheirBatches) {
  expect_steps("laminar", {"sync.relay_pull_s=0.001"},
               {{0, 5, 5, 8, 10, 0, 0, 10},
                {10, 10, 10, 13, 15, 5, 1, 5},
                {15, 15, 15, 18, 20, 10, 2, 0},
                {20, 21, 21, 24, 26, 5, 1, 5},
                {26, 27, 27, 30, 32, 5, 1, 5}});
}

// An engine may pull with nothing else going on: B = 3 groups and engine
// batches of one, so at 25 g4 is done, the queue (g3, g4) is short of a
// batch, the trainer idles and the engine pulls v1 25-26 with nothing in
// flight; then g5 runs 26-31 and completes the batch.
TEST(AsyncHandcheck, LaminarPullsWhileNothingElseRuns) {
  auto f = disaggregated_handcheck({"rollout_batch_size=3", "laminar.engine_batch_groups=1", "sync.relay_pull_s=0.001"});
  scenario::Simulation sim(f.config, f.registry, "laminar", testing::five_token_groups());
  const auto first = sim.step();
  EXPECT_NEAR(first.sync_end_s, 0.020, 1e-12);
  const auto second = sim.step();
  EXPECT_NEAR(second.train_start_s, 0.031, 1e-12);
}

// verl's staleness in samples (async.staleness_threshold), B = 2 and a
// threshold of 0.5: int(1.5 x 2) = 3 groups count for each version.
//   0: nothing counted yet: g0, g1, g2 run 0-5; g0, g1 train 5-8; sync 8-10.
//   1: at 10, g2 is queued (1 counted): g3, g4 start, done at 15; g2, g3 train
//      15-18 (g2's 5 tokens of v0 at version 1: staleness 5, max 1); sync 18-20.
//   2: at 20, g4 is queued: g5, g6 run 20-25; g4, g5 train 25-28 (g4: v1 at 2).
// async.eta = 1 would have started g3 at 0 and trained g2, g3 at 10.
TEST(AsyncHandcheck, VerlStalenessThresholdCountsGroupsPerVersion) {
  // Tokens generated are counted as their samples finish: g0-g2 (15), g3-g4, g5-g6 (10 each).
  expect_steps("async", {"rollout_batch_size=2", "async.staleness_threshold=0.5"},
               {{0, 5, 5, 8, 10, 0, 0, 15}, {10, 15, 15, 18, 20, 5, 1, 10}, {20, 25, 25, 28, 30, 5, 1, 10}}, 10);
  auto eta = disaggregated_handcheck({"rollout_batch_size=2", "async.eta=1"});
  scenario::Simulation sim(eta.config, eta.registry, "async", testing::five_token_groups());
  (void)sim.step();
  EXPECT_NEAR(sim.step().train_start_s, 0.010, 1e-12);
}

// verl's streaming trainer (async.local_steps = 2): B = 2 groups train as two
// local steps of one group, each as soon as its group is queued; the version
// advances, and the sync starts, after the second. One group in flight at a
// time (async.max_inflight_groups = 1), eta = 1:
//   0: g0 0-5; at 5 its local step trains 5-8 and g1 runs 5-10; the trainer
//      waits 8-10; at 10 g1's local step trains 10-13 and g2 starts; sync
//      13-15 (g2 holds 3 tokens).                                         step 0 ends at 15
//   1: g2 re-prefills and ends at 17 (3 tokens of v0, 2 of v1): it trains
//      17-20 (staleness 3 x 1) and g3 runs 17-22; g3 trains 22-25; sync 25-27.
// Each step's trainer is busy 6 ms of its 8 ms span; 10 tokens trained.
TEST(AsyncHandcheck, LocalStepsTrainEachShareAsItIsQueuedAndSyncAfterTheLast) {
  expect_steps("async", {"rollout_batch_size=2", "async.local_steps=2", "async.max_inflight_groups=1"},
               {{0, 10, 5, 13, 15, 0, 0, 10}, {15, 22, 17, 25, 27, 3, 1, 10}}, 10);
  auto f = disaggregated_handcheck({"rollout_batch_size=2", "async.local_steps=2", "async.max_inflight_groups=1"});
  scenario::Simulation sim(f.config, f.registry, "async", testing::five_token_groups());
  for (int k = 0; k < 2; ++k) {
    const auto m = sim.step();
    EXPECT_NEAR(m.train_time_s, 0.006, 1e-12) << "step " << k;
    EXPECT_EQ(m.step, k);
  }
  // The whole batch at once (local_steps 1): it waits for g1, trains 10-13.
  auto whole = disaggregated_handcheck({"rollout_batch_size=2", "async.max_inflight_groups=1"});
  scenario::Simulation w(whole.config, whole.registry, "async", testing::five_token_groups());
  const auto m = w.step();
  EXPECT_NEAR(m.train_start_s, 0.010, 1e-12);
  EXPECT_NEAR(m.train_time_s, 0.003, 1e-12);
}

TEST(AsyncHandcheck, LocalStepsMustShareTheBatchAndItsMiniBatchesEqually) {
  const auto refused = [](const std::vector<std::string>& sets, const std::string& policy, const std::string& says) {
    auto f = disaggregated_handcheck(sets);
    try {
      scenario::Simulation sim(f.config, f.registry, policy, testing::five_token_groups());
      ADD_FAILURE() << "ran with " << sets.back();
    } catch (const base::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused({"rollout_batch_size=3", "async.local_steps=2"}, "async", "key 'async.local_steps': 2 does not divide rollout_batch_size 3");
  refused({"rollout_batch_size=4", "train.time_model=phases", "train.ppo_mini_batches=3", "async.local_steps=2"}, "async",
          "cannot share train.ppo_mini_batches 3");
  refused({"rollout_batch_size=2", "async.local_steps=2"}, "elastic", "elastic lends the trainer's GPUs between whole steps");
}

TEST(AsyncHandcheck, OverlappingPoliciesNeedADisaggregatedCluster) {
  testing::Fixture f("handcheck");
  try {
    scenario::Simulation sim(f.config, f.registry, "async");
    FAIL() << "async ran colocated";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("set cluster.mode=disaggregated"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace april
