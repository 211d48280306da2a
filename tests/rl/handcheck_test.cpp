#include <gtest/gtest.h>

#include <algorithm>

#include "rl/step_metrics.hpp"
#include "test_support.hpp"

namespace april {
namespace {

using policies::GroupId;
using rl::Segment;

using testing::hand_trace;
using testing::with_trace;

TEST(Handcheck, SyncRolloutTimeIsTheLongestSampleOfTheBatch) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "max_response_len=15"});
  scenario::Simulation sim(f.config, f.registry, "sync", with_trace(hand_trace()));
  // Batches: (p0, p1) longest 10; (p2, p3) longest 20, truncated at 15; (p4, p5) 6; (p6, p7) 8.
  const std::vector<double> expected_ms = {10, 15, 6, 8};
  for (double ms : expected_ms) {
    const auto m = sim.step();
    EXPECT_DOUBLE_EQ(m.rollout_time_s, ms * 1e-3);
    EXPECT_EQ(m.tokens_offpolicy, 0);
    EXPECT_EQ(m.tokens_generated, m.tokens_trained);
  }
}

TEST(Handcheck, SyncOnTheGeneratorMatchesTheLongestSample) {
  testing::Fixture f("handcheck", {"steps=4"});
  scenario::Simulation sim(f.config, f.registry, "sync");
  // Replay the generator with the same seed to know each batch's lengths.
  sim::LongTailGenerator gen({f.config.get_int("n_samples_per_prompt"), 16, 0.3, 20, 0.6, 0.4, 3.0, 0, 100, 0}, 1);
  for (int step = 0; step < 4; ++step) {
    std::int32_t longest = 0;
    for (int g = 0; g < f.config.get_int("rollout_batch_size"); ++g) {
      for (auto len : gen.next_group(step).response_tok) longest = std::max(longest, len);
    }
    longest = std::min<std::int32_t>(longest, static_cast<std::int32_t>(f.config.get_int("max_response_len")));
    EXPECT_DOUBLE_EQ(sim.step().rollout_time_s, longest * 1e-3) << "step " << step;
  }
}

// APRIL, B = 2, alpha = 2 (B' = 4), worked by hand:
//  step 0: g0..g3 fresh; g2 done at 4 ms, g0 at 5: batch [g2, g0]; buffer [g1, g3]
//  step 1: g1, g3 resumed, g4, g5 fresh; g5 at +2, g1 at +5: batch [g5, g1]; buffer [g3, g4]
//  step 2: g3, g4, g6, g7; g4 at +1, g7 at +2: batch [g4, g7]; buffer [g3, g6]
//  step 3: g3, g6, g8 (p0 again), g9 (p1); g8 at +5, g6 at +6: batch [g8, g6]; buffer [g3, g9]
//  step 4: g3, g9, g10, g11; g3 at +2, g9 and g10 tie at +4 (g9 submitted first): batch [g3, g9]
TEST(Handcheck, AprilBatchesBufferAndResumeOrderFollowTheHandTrace) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "april.alpha=2"});
  scenario::Simulation sim(f.config, f.registry, "april", with_trace(hand_trace()));
  std::vector<std::vector<GroupId>> batches;
  sim.loop().on_batch = [&](std::int64_t, const auto& ids) {
    std::vector<GroupId> b;
    for (const auto& [id, prompt] : ids) b.push_back(id);
    batches.push_back(b);
  };
  const std::vector<std::vector<GroupId>> want_batches = {{2, 0}, {5, 1}, {4, 7}, {8, 6}, {3, 9}};
  const std::vector<std::vector<GroupId>> want_buffer = {{1, 3}, {3, 4}, {3, 6}, {3, 9}, {10, 11}};
  const std::vector<double> want_rollout_ms = {5, 5, 2, 6, 4};
  std::vector<rl::StepMetrics> steps;
  for (std::size_t s = 0; s < 5; ++s) {
    steps.push_back(sim.step());
    const auto& buf = sim.loop().buffer();
    EXPECT_EQ(std::vector<GroupId>(buf.begin(), buf.end()), want_buffer[s]) << "after step " << s;
    EXPECT_DOUBLE_EQ(steps.back().rollout_time_s, want_rollout_ms[s] * 1e-3) << "step " << s;
    if (s == 3) {
      // g3's long sample carries tokens from four versions.
      const auto seg = sim.loop().group_segments(3);
      EXPECT_EQ(seg[0], (std::vector<Segment>{{0, 5}, {1, 5}, {2, 2}, {3, 6}}));
      EXPECT_EQ(seg[1], (std::vector<Segment>{{0, 1}}));
    }
  }
  EXPECT_EQ(batches, want_batches);
  // Step 1: g1 holds 5 + 2 tokens from version 0 and 5 from version 1; g5 has 3 fresh.
  EXPECT_EQ(steps[1].batch_response_tok, 15);
  EXPECT_EQ(steps[1].tokens_offpolicy, 7);
  EXPECT_EQ(steps[1].staleness_max, 1);
  // Step 4 (version 4): g3 = 5 tok @v0, 5 @v1, 2 @v2, 6 @v3, 2 @v4 and 1 @v0; g9 = 6 @v3, 4 @v4 and 2 @v3.
  EXPECT_EQ(steps[4].batch_response_tok, 33);
  EXPECT_EQ(steps[4].tokens_offpolicy, 27);
  EXPECT_DOUBLE_EQ(steps[4].staleness_token_sum, 5 * 4 + 5 * 3 + 2 * 2 + 6 * 1 + 1 * 4 + 6 * 1 + 2 * 1);
  EXPECT_EQ(steps[4].staleness_max, 4);
  // Step 0: decoded g0 8, g2 8, g1 5 + 2, g3 5 + 1.
  EXPECT_EQ(steps[0].tokens_generated, 29);
  EXPECT_EQ(steps[0].tokens_trained, 16);

  // april_offpolicy_ratio (docs/design.md 3): carried = the last segment of each
  // unfinished sample resumed that step; ratio = carried / (generated + carried).
  //  step 0: nothing resumed: 0 / 29
  //  step 1: g1.s0 5 (v0), g3.s0 5 (v0) carried = 10; decoded in 5 ms: g1.s0 5, g3.s0 5, g4 5 + 5, g5 1 + 2 = 23
  //  step 2: g3.s0 5 (v1), g4 5 + 5 (v1) = 15; decoded in 2 ms: g3.s0 2, g4 1 + 1, g6 2 + 2, g7 2 + 2 = 12
  //  step 3: g3.s0 2 (v2), g6 2 + 2 (v2) = 6; decoded in 6 ms: g3.s0 6, g6 6 + 1, g8 3 + 5, g9 6 + 2 = 29
  //  step 4: g3.s0 6 (v3), g9.s0 6 (v3) = 12; decoded in 4 ms: g3.s0 2, g9.s0 4, g10 4 + 4, g11 4 + 1 = 19
  const std::vector<std::int64_t> want_carried = {0, 10, 15, 6, 12}, want_generated = {29, 23, 12, 29, 19};
  double ratio_sum = 0;
  for (std::size_t s = 0; s < 5; ++s) {
    EXPECT_EQ(steps[s].tokens_carried, want_carried[s]) << "step " << s;
    EXPECT_EQ(steps[s].tokens_generated, want_generated[s]) << "step " << s;
    const double ratio = static_cast<double>(want_carried[s]) / static_cast<double>(want_carried[s] + want_generated[s]);
    EXPECT_DOUBLE_EQ(rl::derive(steps[s]).april_offpolicy_ratio, ratio) << "step " << s;
    ratio_sum += ratio;
  }
  // The run's value is the mean of the steps' ratios (0.2833), not the ratio of the sums (43 / 155 = 0.2774).
  EXPECT_DOUBLE_EQ(rl::summarize(steps).april_offpolicy_ratio, ratio_sum / 5);
  EXPECT_NE(rl::summarize(steps).april_offpolicy_ratio, 43.0 / 155.0);
}

TEST(Handcheck, MaskingOffPolicyTokensMasksThem) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "april.alpha=2", "april.mask_offpolicy=true"});
  scenario::Simulation sim(f.config, f.registry, "april", with_trace(hand_trace()));
  sim.step();
  const auto m = sim.step();
  EXPECT_EQ(m.tokens_offpolicy, 7);
  EXPECT_EQ(m.tokens_trained, 15 - 7);
  EXPECT_EQ(m.tokens_masked, 7);
  EXPECT_EQ(m.tokens_wasted, 0);
}

// april.max_token_staleness = 1, on the APRIL hand trace (its steps as in
// AprilBatchesBufferAndResumeOrderFollowTheHandTrace). Step 4's batch is
// [g3, g9], trained at version 4:
//  g3 (p3: 20, 1) decoded 5 + 1 tokens in step 0, then 5, 2, 6 and 2 more in
//     steps 1 to 4: staleness 4, 3, 2, 1, 0. Tokens staler than 1: 6 + 5 + 2 = 13.
//  g9 (p1: 10, 2) decoded 6 + 2 in step 3 and 4 in step 4: staleness 1 and 0.
// So 13 tokens are masked and 21 + 12 - 13 = 20 trained; nothing is wasted, and
// the group is not restarted (april.max_staleness would have restarted g3).
TEST(Handcheck, APerTokenStalenessCapMasksOnlyTheTooOldTokens) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "april.alpha=2", "april.max_token_staleness=1"});
  scenario::Simulation sim(f.config, f.registry, "april", with_trace(hand_trace()));
  std::vector<rl::StepMetrics> steps;
  for (int s = 0; s < 5; ++s) steps.push_back(sim.step());
  const auto& m = steps[4];
  EXPECT_EQ(m.batch_response_tok, 33);
  EXPECT_EQ(m.tokens_offpolicy, 6 + 5 + 2 + 6 + 8);
  EXPECT_EQ(m.staleness_max, 4);
  EXPECT_EQ(m.tokens_masked, 13);
  EXPECT_EQ(m.tokens_trained, 20);
  EXPECT_EQ(m.tokens_wasted, 0);
  // The cap of 1 masks nothing before: no token was 2 versions old in steps 0 to 3
  // except g3's, which was not in a batch.
  for (int s = 0; s < 4; ++s) EXPECT_EQ(steps[static_cast<std::size_t>(s)].tokens_masked, 0) << "step " << s;
  // Accounting: every decoded token is trained, masked, wasted or still held.
  std::int64_t generated = 0, trained = 0, masked = 0, wasted = 0;
  for (const auto& x : steps) {
    generated += x.tokens_generated;
    trained += x.tokens_trained;
    masked += x.tokens_masked;
    wasted += x.tokens_wasted;
  }
  EXPECT_EQ(generated, trained + masked + wasted + sim.loop().buffered_tok());
  EXPECT_EQ(masked, sim.loop().total_masked_tok());
}

TEST(Handcheck, MaxStalenessRestartsOldGroupsFromScratch) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "april.alpha=2", "april.max_staleness=1"});
  scenario::Simulation sim(f.config, f.registry, "april", with_trace(hand_trace()));
  for (int s = 0; s < 3; ++s) sim.step();
  // At step 2, g3 (tokens from version 0) is 2 versions old: it restarts, wasting its 5 + 5 + 1 tokens.
  for (int s = 3; s < 8; ++s) {
    const auto m = sim.step();
    EXPECT_LE(m.staleness_max, 1);
  }
  EXPECT_GT(sim.loop().total_wasted_tok(), 0);
}

// Every decoded token is trained, still buffered, or wasted.
TEST(Conservation, GeneratedEqualsTrainedPlusMaskedPlusBufferedPlusWasted) {
  for (const std::string policy : {"sync", "april", "sorted"}) {
    for (const std::string filter : {"false", "true"}) {
      testing::Fixture f("default",
                         {"steps=6", "max_response_len=2000", "workload.response_median_tok=300", "filter.dynamic_sampling=" + filter,
                          "april.max_staleness=1", "sorted.max_staleness=1", "april.max_token_staleness=0"});
      scenario::Simulation sim(f.config, f.registry, policy);
      std::int64_t generated = 0, trained = 0, wasted = 0, masked = 0;
      for (int s = 0; s < 6; ++s) {
        const auto m = sim.step();
        generated += m.tokens_generated;
        trained += m.tokens_trained;
        wasted += m.tokens_wasted;
        masked += m.tokens_masked;
        ASSERT_EQ(generated, trained + masked + wasted + sim.loop().buffered_tok()) << policy << " step " << s;
      }
      EXPECT_EQ(generated, sim.loop().total_generated_tok());
      if (filter == "true") {
        EXPECT_GT(wasted, 0) << policy;
      }
      if (policy == "april") {
        EXPECT_GT(masked, 0);
      }
    }
  }
}

TEST(Sorted, RoundOfKTimesBFeedsKUpdatesShortestFirst) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "sorted.updates_per_rollout=2"});
  scenario::Simulation sim(f.config, f.registry, "sorted", with_trace(hand_trace()));
  std::vector<std::vector<std::string>> batches;
  sim.loop().on_batch = [&](std::int64_t, const auto& ids) {
    std::vector<std::string> b;
    for (const auto& [id, prompt] : ids) b.push_back(prompt);
    batches.push_back(b);
  };
  // Round 1 = p0..p3: p2 (4) and p0 (5) first, then p1 and p3 finish the round (p3 needs 20).
  const auto m0 = sim.step();
  const auto m1 = sim.step();
  EXPECT_EQ(batches[0], (std::vector<std::string>{"p2", "p0"}));
  EXPECT_EQ(batches[1], (std::vector<std::string>{"p1", "p3"}));
  EXPECT_DOUBLE_EQ(m0.rollout_time_s, 5e-3);
  EXPECT_DOUBLE_EQ(m1.rollout_time_s, 15e-3);  // p3's 20 tokens, 5 generated in step 0
  EXPECT_EQ(m1.groups_submitted, 2);           // no fresh groups inside a round
  sim.step();
  EXPECT_EQ(sim.loop().buffer().size(), 2U);  // round 2 = p4..p7, two left
}

}  // namespace
}  // namespace april

namespace april {
namespace {

base::GroupSpec judged(const std::string& id, std::vector<std::int32_t> lengths, std::vector<std::uint8_t> correct) {
  auto g = testing::group(id, std::move(lengths));
  g.correct = std::move(correct);
  return g;
}

// B = 2, B' = 2 with the DAPO filter: g0 (all correct) is rejected at 1 ms,
// leaving 0 accepted + 1 in flight < B, so APRIL submits another wave of B' = 2.
TEST(Filter, AprilSubmitsAnotherWaveWhenRejectionsLeaveTooFewGroups) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "april.alpha=1", "filter.dynamic_sampling=true"});
  scenario::RunOptions o;
  o.trace = std::vector<base::GroupSpec>{judged("g0", {1, 1}, {1, 1}), judged("g1", {3, 3}, {1, 0}), judged("g2", {2, 2}, {0, 1}),
                                         judged("g3", {9, 9}, {0, 1})};
  scenario::Simulation sim(f.config, f.registry, "april", o);
  std::vector<std::string> batch;
  sim.loop().on_batch = [&](std::int64_t, const auto& ids) {
    for (const auto& [id, prompt] : ids) batch.push_back(prompt);
  };
  const auto m = sim.step();
  EXPECT_EQ(m.groups_submitted, 4);
  EXPECT_EQ(m.groups_rejected, 1);
  EXPECT_EQ(m.tokens_wasted, 2);
  // g2 is submitted at 1 ms, when the engine has already started its second
  // iteration: it joins at the 2 ms boundary and ends at 4 ms, after g1 (3 ms).
  EXPECT_EQ(batch, (std::vector<std::string>{"g1", "g2"}));
  EXPECT_DOUBLE_EQ(m.rollout_time_s, 4e-3);
  EXPECT_EQ(sim.loop().buffer().size(), 1U);  // g3 goes back partial
}

}  // namespace
}  // namespace april
