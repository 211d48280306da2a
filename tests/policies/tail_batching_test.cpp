// tail_batching (policies/tail_batching_policy.hpp), worked by hand on the
// handcheck trace: B = 2, alpha 2 (B' = 4), 1 ms per iteration, every sample
// decodes one token per iteration, no prefill, train, sync or abort time.
#include <gtest/gtest.h>

#include <algorithm>

#include "rl/step_metrics.hpp"
#include "test_support.hpp"

namespace april {
namespace {

using policies::GroupId;

using testing::hand_trace;

struct TailRun {
  std::vector<rl::StepMetrics> steps;
  std::vector<std::vector<GroupId>> batches;
};

TailRun run(const std::string& resume, int steps) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "tail_batching.alpha=2", "tail_batching.resume=" + resume});
  const auto o = testing::with_trace(hand_trace());
  scenario::Simulation sim(f.config, f.registry, "tail_batching", o);
  TailRun r;
  sim.loop().on_batch = [&](std::int64_t, const auto& ids) {
    std::vector<GroupId> b;
    for (const auto& [id, prompt] : ids) b.push_back(id);
    r.batches.push_back(b);
  };
  for (int s = 0; s < steps; ++s) r.steps.push_back(sim.step());
  return r;
}

//  step 0, short: g0..g3 fresh; g2 done at 4 ms, g0 at 5: batch [g2, g0]; g1 (5 + 2
//          tokens) and g3 (5 + 1) set aside.
//  step 1, long:  g1 and g3 start over (their 13 tokens wasted); g1 done at 10 ms,
//          g3 at 20: batch [g1, g3], all on-policy.
//  step 2, short: g4..g7 fresh; g5 and g7 both done at 2 ms (g5 submitted first):
//          batch [g5, g7]; g4 (2 + 2) and g6 (2 + 2) set aside.
//  step 3, long:  g4 (6, 6) and g6 (8, 3) start over, 8 tokens wasted: batch at 8 ms.
TEST(TailBatching, ShortAndLongRoundsFollowTheHandTrace) {
  const TailRun r = run("restart", 4);
  EXPECT_EQ(r.batches, (std::vector<std::vector<GroupId>>{{2, 0}, {1, 3}, {5, 7}, {4, 6}}));
  const std::vector<double> rollout_ms = {5, 20, 2, 8};
  const std::vector<std::int64_t> submitted = {4, 2, 4, 2}, wasted = {0, 13, 0, 8};
  for (std::size_t s = 0; s < 4; ++s) {
    EXPECT_DOUBLE_EQ(r.steps[s].rollout_time_s, rollout_ms[s] * 1e-3) << "step " << s;
    EXPECT_EQ(r.steps[s].groups_submitted, submitted[s]) << "step " << s;
    EXPECT_EQ(r.steps[s].tokens_wasted, wasted[s]) << "step " << s;
    EXPECT_EQ(r.steps[s].tokens_offpolicy, 0) << "step " << s;  // synchronous semantics
  }
}

// resume=keep: the long round continues g1 (5 more tokens, done at +5) and g3
// (15 more, done at +15); their 13 earlier tokens train, one version stale.
TEST(TailBatching, KeepingTheTokensTrainsThemOffPolicy) {
  const TailRun r = run("keep", 2);
  EXPECT_EQ(r.batches[1], (std::vector<GroupId>{1, 3}));
  EXPECT_DOUBLE_EQ(r.steps[1].rollout_time_s, 15e-3);
  EXPECT_EQ(r.steps[1].tokens_wasted, 0);
  EXPECT_EQ(r.steps[1].tokens_offpolicy, 13);
  EXPECT_EQ(r.steps[1].staleness_max, 1);
}

// Conformance with RollPacker's tail batching (arXiv 2509.21009; the
// authors' NSDI'26 text in github Farrrrland/RollPacker, section 3 and
// Fig. 4): with eta = 1.25 a short round launches eta P0 prompts and keeps
// the first P0 to finish; the prompts left over wait in a queue; once P0 have
// gathered, a long round runs exactly those, without speculation or fresh
// prompts: "four short rounds and one long round". Restarted from the
// prompt, every trained token is on-policy. On the generator's lengths, 10
// steps of P0 = 4: rounds of 5, 5, 5, 5, 4 groups twice, and each long round
// trains exactly the four prompts its short rounds set aside.
TEST(TailBatching, ConformsToRollPackersFourShortRoundsThenOneLong) {
  testing::Fixture f("handcheck", {"rollout_batch_size=4", "tail_batching.alpha=1.25", "tail_batching.resume=restart"});
  scenario::Simulation sim(f.config, f.registry, "tail_batching");
  std::vector<std::vector<GroupId>> batches;
  sim.loop().on_batch = [&](std::int64_t, const auto& ids) {
    std::vector<GroupId> b;
    for (const auto& [id, prompt] : ids) b.push_back(id);
    std::sort(b.begin(), b.end());
    batches.push_back(b);
  };
  std::vector<std::int64_t> submitted;
  for (int s = 0; s < 10; ++s) {
    const rl::StepMetrics m = sim.step();
    submitted.push_back(m.groups_submitted);
    EXPECT_EQ(m.tokens_offpolicy, 0) << "step " << s;
  }
  EXPECT_EQ(submitted, (std::vector<std::int64_t>{5, 5, 5, 5, 4, 5, 5, 5, 5, 4}));
  // Groups are numbered as drawn: short rounds 0-3 draw 0..19, 5-8 draw 20..39.
  for (const int long_round : {4, 9}) {
    const GroupId first = long_round == 4 ? 0 : 20;
    std::vector<GroupId> set_aside;
    for (GroupId id = first; id < first + 20; ++id) {
      bool batched = false;
      for (int s = long_round - 4; s < long_round; ++s) {
        const auto& b = batches[static_cast<std::size_t>(s)];
        batched = batched || std::find(b.begin(), b.end(), id) != b.end();
      }
      if (!batched) set_aside.push_back(id);
    }
    EXPECT_EQ(batches[static_cast<std::size_t>(long_round)], set_aside) << "long round at step " << long_round;
  }
}

}  // namespace
}  // namespace april
