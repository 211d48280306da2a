// Length-aware scheduling (policies/length_aware_policy.hpp): the predictor
// worked by hand, and its two decisions, admission order and routing, on
// hand traces where every millisecond can be followed on paper.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "policies/length_aware_policy.hpp"
#include "policies/length_predictor.hpp"
#include "sim/workload.hpp"
#include "test_support.hpp"

namespace april {
namespace {

using policies::LengthPredictor;
using testing::group;
using testing::rollout_ms;
using testing::with_trace;

TEST(LengthPredictor, PredictsTheMeanOfTheObservedLengthsAboveWhatASampleHasGenerated) {
  LengthPredictor p;
  EXPECT_EQ(p.predict_total_tok("q", {}, 0), 0) << "nothing observed: no prediction";
  p.record("q", 100);
  p.record("q", 200);
  p.record("q", 400);
  EXPECT_EQ(p.predict_total_tok("q", {}, 0), 234);    // (100 + 200 + 400) / 3, rounded up
  EXPECT_EQ(p.predict_total_tok("q", {}, 150), 300);  // the mean of 200 and 400: it is past 100
  EXPECT_EQ(p.predict_total_tok("q", {}, 399), 400);
  EXPECT_EQ(p.predict_total_tok("q", {}, 400), 800) << "past everything seen: twice what it has";
  // Finished siblings pool with the prompt's history: (200 + 400 + 300) / 3.
  EXPECT_EQ(p.predict_total_tok("q", {50, 300}, 150), 300);
}

TEST(LengthPredictor, ANewPromptIsPredictedFromRecentLengthsOfAnyPromptAndHistoryIsBounded) {
  LengthPredictor p(/*history_per_prompt=*/2, /*prior_size=*/3);
  p.record("a", 10);
  p.record("a", 20);
  p.record("a", 90);  // pushes 10 out of a's history
  EXPECT_EQ(p.predict_total_tok("a", {}, 0), 55);
  p.record("b", 30);  // the prior now holds 20, 90, 30
  EXPECT_EQ(p.predict_total_tok("new", {}, 0), 47);
  EXPECT_EQ(p.predict_total_tok("new", {}, 25), 60);
  // Its own finished siblings replace the prior for a new prompt.
  EXPECT_EQ(p.predict_total_tok("new", {5}, 0), 5);
  EXPECT_THROW(LengthPredictor(0, 1), std::invalid_argument);
}

// One engine holding 2 requests at a time, B = 2, the hand trace (cycles
// after 8 groups, so step 4 samples p0 {3, 5} and p1 {10, 2} again).
//  steps 0-3: nothing known about their prompts, or the same prediction for
//    every sample (the prior): the base's order, as sync.
//  step 4, sync's order p0.0 p0.1 p1.0 p1.1: 3 and 5 run; at 3 p1.0 (10)
//    starts, ends at 13; at 5 p1.1 (2) starts, ends at 7: 13 ms.
//  step 4, long first: p1 is predicted (10 + 2) / 2 = 6, p0 (3 + 5) / 2 = 4,
//    so p1.0 and p1.1 run first; at 2 p0.0 (3) starts, ends at 5; then
//    p0.1 (5), ends at 10, with p1.0: 10 ms.
TEST(LengthAware, LongFirstAdmissionShortensASyncStepFromThePromptsEarlierLengths) {
  const std::vector<std::string> sets = {"rollout_batch_size=2", "engine.max_running=2"};
  const auto sync = rollout_ms("sync", sets, testing::hand_trace(), 5);
  auto la_sets = sets;
  la_sets.push_back("length_aware.base=sync");
  const auto long_first = rollout_ms("length_aware", la_sets, testing::hand_trace(), 5);
  la_sets.push_back("length_aware.order=as_given");
  const auto as_given = rollout_ms("length_aware", la_sets, testing::hand_trace(), 5);
  EXPECT_EQ(sync, as_given);
  for (std::size_t s = 0; s < 4; ++s) EXPECT_DOUBLE_EQ(long_first[s], sync[s]) << "step " << s;
  EXPECT_DOUBLE_EQ(sync[4], 13);
  EXPECT_DOUBLE_EQ(long_first[4], 10);
}

// Two engines holding 1 request each, B = 3 groups of one sample: A (8),
// B (4), C (4), the same three every step.
//  step 0 and sync: fewest requests routes A, B, C to engines 0, 1, 0: engine 0
//    runs A then C, 12 ms.
//  step 1, predicted work: A is predicted 8, B and C 4; long first gives
//    A -> engine 0 (8 predicted), B -> engine 1 (4), C -> engine 1 (4 < 8):
//    engine 1 runs B then C, 8 ms, as engine 0 runs A.
//  step 1, same order routed by requests: C -> engine 0, 12 ms.
TEST(LengthAware, RoutingOnPredictedWorkBalancesTheEngines) {
  const std::vector<base::GroupSpec> trace = {group("A", {8}), group("B", {4}), group("C", {4})};
  const std::vector<std::string> sets = {"rollout_batch_size=3", "n_samples_per_prompt=1", "cluster.gpus=2",
                                         "cluster.engines=2",    "engine.max_running=1",   "length_aware.base=sync"};
  EXPECT_EQ(rollout_ms("sync", sets, trace, 2), (std::vector<double>{12, 12}));
  EXPECT_EQ(rollout_ms("length_aware", sets, trace, 2), (std::vector<double>{12, 8}));
  auto by_requests = sets;
  by_requests.push_back("length_aware.route=requests");
  EXPECT_EQ(rollout_ms("length_aware", by_requests, trace, 2), (std::vector<double>{12, 12}));
}

// A resumed sample is predicted from what it has generated and its finished
// siblings, so APRIL's resumed tails are admitted by what they have left.
// The same decisions run through the same loop as every policy: the tokens
// are conserved and every sample decoded exactly its trace length.
TEST(LengthAware, OverAprilItConservesTokensAndTrainsEveryGroupItCompletes) {
  const std::vector<std::string> sets = {"rollout_batch_size=2", "april.alpha=2", "engine.max_running=3"};
  for (const char* order : {"long_first", "short_first"}) {
    auto s = sets;
    s.push_back(std::string("length_aware.order=") + order);
    testing::Fixture f("handcheck", s);
    scenario::Simulation sim(f.config, f.registry, "length_aware", with_trace(testing::hand_trace()));
    std::int64_t trained = 0;
    for (int step = 0; step < 12; ++step) trained += sim.step().tokens_trained;
    const auto& loop = sim.loop();
    EXPECT_EQ(loop.total_generated_tok(),
              loop.total_trained_tok() + loop.total_masked_tok() + loop.total_wasted_tok() + loop.buffered_tok())
        << order;
    EXPECT_EQ(trained, loop.total_trained_tok()) << order;
    EXPECT_EQ(loop.total_wasted_tok(), 0) << order;
  }
}

// A policy's plan is checked: a submission order that is not a permutation
// is the policy's bug, reported, not silently submitted.
TEST(LengthAware, APlanThatIsNotAPermutationIsRefused) {
  testing::Fixture f("handcheck", {"rollout_batch_size=1"});
  const std::string error = testing::first_step_error(
      f, 1,
      [](const std::vector<policies::Submission>& subs) {
        policies::SubmissionPlan p;
        p.order.assign(subs.size(), 0);  // the first twice
        return p;
      },
      testing::hand_trace());
  EXPECT_NE(error.find("not a permutation"), std::string::npos) << error;
}

// A predicted length past a 32-bit token count is the policy's bug too: the
// simulator's requests hold the predicted end in 32 bits, like every count.
TEST(LengthAware, APredictionPast32BitsIsRefused) {
  testing::Fixture f("handcheck", {"rollout_batch_size=1"});
  const auto predict = [](std::int64_t tokens) {
    return [tokens](const std::vector<policies::Submission>& subs) {
      policies::SubmissionPlan p;
      p.predicted_remaining_tok.assign(subs.size(), tokens);
      return p;
    };
  };
  const std::string error = testing::first_step_error(f, 1, predict(std::int64_t{1} << 31), testing::hand_trace());
  EXPECT_NE(error.find("past 2^31 - 1 in all"), std::string::npos) << error;
  // One token fewer is taken (the step then stops on this policy's missing batch, past the check).
  const std::string taken = testing::first_step_error(f, 1, predict((std::int64_t{1} << 31) - 1), testing::hand_trace());
  EXPECT_EQ(taken.find("past 2^31"), std::string::npos) << taken;
  EXPECT_NE(taken.find("without forming a batch"), std::string::npos) << taken;
}

}  // namespace
}  // namespace april

namespace april {
namespace {

// What the predictor learns from: a dataset's prompts come back each epoch
// with their own length scale, their samples drawn afresh.
TEST(LongTailGenerator, ADatasetOfNPromptsRepeatsEachPromptEveryNGroups) {
  sim::LongTailParams p;
  p.dataset_prompts = 3;
  p.sigma_within = 0.05;
  p.incorrect_len_factor = 1.0;
  sim::LongTailGenerator gen(p, 7);
  std::vector<base::GroupSpec> g;
  for (int i = 0; i < 7; ++i) g.push_back(gen.next_group(0));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(g[static_cast<std::size_t>(i)].prompt_id, g[static_cast<std::size_t>(i + 3)].prompt_id);
    EXPECT_EQ(g[static_cast<std::size_t>(i)].prompt_tok, g[static_cast<std::size_t>(i + 3)].prompt_tok);
    EXPECT_NE(g[static_cast<std::size_t>(i)].response_tok, g[static_cast<std::size_t>(i + 3)].response_tok) << "samples drawn afresh";
    // Same scale: with sigma_within 0.05 the first samples agree within 30%.
    const double ratio =
        static_cast<double>(g[static_cast<std::size_t>(i)].response_tok[0]) / g[static_cast<std::size_t>(i + 3)].response_tok[0];
    EXPECT_GT(ratio, 0.77);
    EXPECT_LT(ratio, 1.3);
  }
  EXPECT_NE(g[0].prompt_id, g[1].prompt_id);
  // Without a dataset size every prompt is new.
  sim::LongTailGenerator fresh(sim::LongTailParams{}, 7);
  EXPECT_NE(fresh.next_group(0).prompt_id, fresh.next_group(0).prompt_id);
}

}  // namespace
}  // namespace april
