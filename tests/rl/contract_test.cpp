// The corners of docs/design.md section 3 where slime's behaviour is the contract:
// ties between groups completing at one instant, the refill rule under the
// dynamic-sampling filter, the sync baseline under the filter, and slime's
// keep_when_insufficient fallback. Every expectation is worked by hand on the
// handcheck scenario (1 ms per iteration, no running cap).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.hpp"

namespace april {
namespace {

using policies::GroupId;

base::GroupSpec judged(const std::string& id, std::vector<std::int32_t> lengths, std::vector<std::uint8_t> correct) {
  auto g = testing::group(id, std::move(lengths));
  g.correct = std::move(correct);
  return g;
}

using testing::with_trace;

// Records each batch's prompt ids.
struct Batches {
  std::vector<std::vector<std::string>> prompts;
  explicit Batches(scenario::Simulation& sim) {
    sim.loop().on_batch = [this](std::int64_t, const auto& ids) {
      std::vector<std::string> b;
      for (const auto& [id, prompt] : ids) b.push_back(prompt);
      prompts.push_back(b);
    };
  }
};

// Two engines, B = 1, B' = 2. Routing is least-outstanding, ties to the lowest
// engine: g0's samples go to engines 0 and 1, g1's to engine 0. At 5 ms g0's
// long sample (engine 1) and g1's (engine 0) finish together, so both groups
// complete at one instant. g0 was submitted first: it is the batch, although
// engine 0 reports first.
TEST(Ties, GroupsCompletingTogetherGoBySubmissionOrderNotEngine) {
  testing::Fixture f("handcheck", {"cluster.gpus=2", "cluster.engines=2", "rollout_batch_size=1", "april.alpha=2"});
  scenario::Simulation sim(f.config, f.registry, "april", with_trace({testing::group("g0", {2, 5}), testing::group("g1", {5})}));
  Batches b(sim);
  const auto m = sim.step();
  EXPECT_DOUBLE_EQ(m.rollout_time_s, 5e-3);
  ASSERT_EQ(b.prompts.size(), 1U);
  EXPECT_EQ(b.prompts[0], (std::vector<std::string>{"g0"}));
  EXPECT_EQ(std::vector<GroupId>(sim.loop().buffer().begin(), sim.loop().buffer().end()), (std::vector<GroupId>{1}));
}

// Three engines, B = 2, B' = 3: g0 = {4} on engine 0, g1 = {4, 4} on engines
// 1 and 2, g2 = {4} on engine 0 (all engines have one, lowest wins). All
// three complete at 4 ms; submission order makes the batch [g0, g1], and g2
// (complete) goes to the buffer. Engine order would have given [g0, g2].
TEST(Ties, ThreeEnginesTieKeepsSubmissionOrder) {
  testing::Fixture f("handcheck", {"cluster.gpus=3", "cluster.engines=3", "rollout_batch_size=2", "april.over_sampling_batch_size=3"});
  scenario::Simulation sim(f.config, f.registry, "april",
                           with_trace({testing::group("g0", {4}), testing::group("g1", {4, 4}), testing::group("g2", {4})}));
  Batches b(sim);
  sim.step();
  ASSERT_EQ(b.prompts.size(), 1U);
  EXPECT_EQ(b.prompts[0], (std::vector<std::string>{"g0", "g1"}));
  const auto next = sim.loop().group(2);
  EXPECT_TRUE(next.complete);
}

// The refill check counts every group completing at the instant. B = 2,
// B' = 3 with the filter: at 1 ms g0 (all correct) is rejected while g1
// (mixed) completes with it. Counting g1, the candidates are g1 + g2 in
// flight = 2 = B: no new wave. (Counting only accepted + in flight, 1 < 2,
// would have submitted three more groups.) The batch is [g1, g2] at 5 ms.
TEST(Refill, GroupsCompletingAtTheSameInstantCountBeforeAnotherWave) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "april.over_sampling_batch_size=3", "filter.dynamic_sampling=true"});
  scenario::Simulation sim(
      f.config, f.registry, "april",
      with_trace({judged("g0", {1, 1}, {1, 1}), judged("g1", {1, 1}, {1, 0}), judged("g2", {5, 5}, {0, 1}), judged("g3", {7, 7}, {0, 1})}));
  Batches b(sim);
  const auto m = sim.step();
  EXPECT_EQ(m.groups_submitted, 3);
  EXPECT_EQ(m.groups_rejected, 1);
  EXPECT_DOUBLE_EQ(m.rollout_time_s, 5e-3);
  EXPECT_EQ(b.prompts[0], (std::vector<std::string>{"g1", "g2"}));
}

// When rejections do leave too few candidates, APRIL submits one wave of B'.
// B = 2, B' = 2: g0 and g1 both rejected at 1 ms; the wave brings g2, g3,
// which start at once on the now idle engine and finish at 3 ms.
TEST(Refill, OneWaveOfBPrimeWhenTheInstantLeavesTooFew) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "april.alpha=1", "filter.dynamic_sampling=true"});
  scenario::Simulation sim(
      f.config, f.registry, "april",
      with_trace({judged("g0", {1, 1}, {1, 1}), judged("g1", {1, 1}, {0, 0}), judged("g2", {2, 2}, {0, 1}), judged("g3", {2, 2}, {1, 0})}));
  Batches b(sim);
  const auto m = sim.step();
  EXPECT_EQ(m.groups_submitted, 4);
  EXPECT_EQ(m.groups_rejected, 2);
  EXPECT_EQ(m.tokens_wasted, 4);
  EXPECT_DOUBLE_EQ(m.rollout_time_s, 3e-3);
  EXPECT_EQ(b.prompts[0], (std::vector<std::string>{"g2", "g3"}));
}

// Sync under the filter, as slime without partial rollout: B = 2; g0 is
// rejected at 1 ms, leaving g1 alone in flight, so a whole wave of B = 2
// fresh groups (g2, g3) follows; they join at the 2 ms boundary. The batch
// is [g1 (3 ms), g2 (4 ms)]; g3, two tokens into each sample, is aborted and
// dropped: 2 (g0) + 4 (g3) tokens wasted, nothing buffered. Step 1 starts
// from the next prompt in dataset order, g4.
TEST(SyncFilter, ShortWaveIsAWholeBAndLeftoversAreDropped) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "filter.dynamic_sampling=true"});
  scenario::Simulation sim(f.config, f.registry, "sync",
                           with_trace({judged("g0", {1, 1}, {1, 1}), judged("g1", {3, 3}, {1, 0}), judged("g2", {2, 2}, {0, 1}),
                                       judged("g3", {9, 9}, {0, 1}), judged("g4", {1, 1}, {0, 1}), judged("g5", {2, 2}, {0, 1})}));
  Batches b(sim);
  const auto m0 = sim.step();
  EXPECT_EQ(m0.groups_submitted, 4);
  EXPECT_EQ(m0.groups_rejected, 1);
  EXPECT_EQ(m0.groups_aborted, 1);
  EXPECT_DOUBLE_EQ(m0.rollout_time_s, 4e-3);
  EXPECT_EQ(m0.tokens_generated, 2 + 6 + 4 + 4);
  EXPECT_EQ(m0.tokens_wasted, 2 + 4);
  EXPECT_EQ(m0.tokens_trained, 6 + 4);
  EXPECT_TRUE(sim.loop().buffer().empty());
  EXPECT_EQ(sim.loop().buffered_tok(), 0);
  const auto m1 = sim.step();
  EXPECT_EQ(b.prompts[0], (std::vector<std::string>{"g1", "g2"}));
  EXPECT_EQ(b.prompts[1], (std::vector<std::string>{"g4", "g5"}));
  EXPECT_EQ(m1.tokens_offpolicy, 0);
  EXPECT_EQ(m1.tokens_wasted, 0);
}

// sync.filter_refill=missing keeps the old rule: only the missing group is
// submitted (g2), and the batch is [g1, g2] with nothing left over.
TEST(SyncFilter, MissingRefillSubmitsOnlyWhatIsMissing) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "filter.dynamic_sampling=true", "sync.filter_refill=missing"});
  scenario::Simulation sim(
      f.config, f.registry, "sync",
      with_trace({judged("g0", {1, 1}, {1, 1}), judged("g1", {3, 3}, {1, 0}), judged("g2", {2, 2}, {0, 1}), judged("g3", {9, 9}, {0, 1})}));
  Batches b(sim);
  const auto m = sim.step();
  EXPECT_EQ(m.groups_submitted, 3);
  EXPECT_EQ(m.tokens_wasted, 2);
  EXPECT_DOUBLE_EQ(m.rollout_time_s, 4e-3);
  EXPECT_EQ(b.prompts[0], (std::vector<std::string>{"g1", "g2"}));
}

// filter.keep_when_insufficient: B = 2, B' = 2. g0 (all correct) completes
// at 1 ms with only g1 in flight: dropping it would leave 1 < B candidates,
// so it is kept and the batch is [g0, g1] at 3 ms with no second wave.
TEST(KeepWhenInsufficient, KeepsARejectedGroupRatherThanLaunchAWave) {
  testing::Fixture f("handcheck",
                     {"rollout_batch_size=2", "april.alpha=1", "filter.dynamic_sampling=true", "filter.keep_when_insufficient=true"});
  scenario::Simulation sim(f.config, f.registry, "april",
                           with_trace({judged("g0", {1, 1}, {1, 1}), judged("g1", {3, 3}, {1, 0}), judged("g2", {2, 2}, {0, 1})}));
  Batches b(sim);
  const auto m = sim.step();
  EXPECT_EQ(m.groups_submitted, 2);
  EXPECT_EQ(m.groups_rejected, 0);
  EXPECT_EQ(m.tokens_wasted, 0);
  EXPECT_DOUBLE_EQ(m.rollout_time_s, 3e-3);
  EXPECT_EQ(b.prompts[0], (std::vector<std::string>{"g0", "g1"}));
}

// With enough candidates the fallback does not apply: B = 2, B' = 3, g0 is
// rejected at 1 ms while g1 and g2 are in flight (2 = B candidates).
TEST(KeepWhenInsufficient, DropsTheGroupWhenEnoughCandidatesRemain) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "april.over_sampling_batch_size=3", "filter.dynamic_sampling=true",
                                   "filter.keep_when_insufficient=true"});
  scenario::Simulation sim(f.config, f.registry, "april",
                           with_trace({judged("g0", {1, 1}, {1, 1}), judged("g1", {3, 3}, {1, 0}), judged("g2", {4, 4}, {0, 1})}));
  Batches b(sim);
  const auto m = sim.step();
  EXPECT_EQ(m.groups_submitted, 3);
  EXPECT_EQ(m.groups_rejected, 1);
  EXPECT_DOUBLE_EQ(m.rollout_time_s, 4e-3);
  EXPECT_EQ(b.prompts[0], (std::vector<std::string>{"g1", "g2"}));
}

}  // namespace
}  // namespace april
