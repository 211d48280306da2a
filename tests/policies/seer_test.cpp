// Seer's global pool and context-aware scheduling (policies/seer_policy.hpp)
// on hand traces where every millisecond can be followed on paper (the
// handcheck scenario: one token per millisecond, prefill free), and the
// dispatch queue of the contract it runs on (SubmissionPlan::hold,
// Decisions::release, on_samples_finished) with its errors.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "policies/seer_policy.hpp"
#include "sim/workload.hpp"
#include "test_support.hpp"

namespace april {
namespace {

using testing::group;
using testing::rollout_ms;
using testing::with_trace;

void expect_ms(const std::vector<double>& got, double want) {
  ASSERT_EQ(got.size(), 1U);
  EXPECT_DOUBLE_EQ(got[0], want);
}

// A held sample sent when another finishes joins its engine at the next
// iteration boundary: the engine's running requests go on at once (only an
// idle engine waits for the instant's decisions, docs/design.md 3b), as a real
// server's scheduler loop does not wait for its client.
//
// One engine holding 2 requests, B = 2: p0 {3, 5} and p1 {10, 2}.
//  sync: p0.0 and p0.1 run; at 3 p1.0 (10) starts from the engine's own
//    queue, ends at 13; at 5 p1.1 (2), ends at 7: 13 ms.
//  context-aware: the probes p0.0 and p1.0 go first (both 0 tokens: in
//    submission order); p0.1 and p1.1 are held. At 3 p0.0 ends: p0's
//    estimate is 3, p1's still unknown (the length cap), so p1.1 goes and
//    runs 4..6. At 6 p1's estimate is 2 and p0.1 (5) goes: 7..12, after
//    p1.0 ends at 10: 12 ms.
//  fifo: p0.0 and p0.1 go; at 3 p1.0 goes: 4..14, and p1.1 at 5: 6..8: 14
//    ms, the iteration each send waits costing more than the order gains.
TEST(Seer, ContextAwareSchedulingRunsTheProbesFirstThenTheLongestEstimate) {
  const std::vector<std::string> sets = {"rollout_batch_size=2", "engine.max_running=2"};
  const std::vector<base::GroupSpec> trace = {group("p0", {3, 5}), group("p1", {10, 2})};
  expect_ms(rollout_ms("sync", sets, trace, 1), 13);
  expect_ms(rollout_ms("seer", sets, trace, 1), 12);
  auto fifo = sets;
  fifo.push_back("seer.scheduling=fifo");
  expect_ms(rollout_ms("seer", fifo, trace, 1), 14);
}

// The estimate is the longest finished sibling, learned online, and a group
// whose probe has not finished goes before every known one.
// One engine holding 2 requests, B = 3: A {2, 9}, B {4, 3}, C {1, 1}.
//  t=0 the probes A.0 (2) and B.0 (4) go; C.0 (a probe), A.1, B.1, C.1 wait.
//  t=2 A.0 ends, A = 2: the probe C.0 goes first, runs 3..4.
//  t=4 B.0 and C.0 end: B = 4, C = 1, and the engine is idle: B.1 (the
//    longest estimate) and A.1 start at once, 4..7 and 4..13.
//  t=7 B.1 ends: C.1 runs 8..9. The last group, A, completes at 13.
// sync: A.0, A.1 run; at 2 B.0 (2..6); at 6 B.1 (6..9); at 9 A.1 and B.1
//  end and C.0, C.1 run 9..10: 10 ms. Context-aware loses here: A's first
//  sample said 2, its second is 9. The paper's premise is lengths that
//  cluster by prompt; this trace breaks it on purpose.
TEST(Seer, TheEstimateIsLearnedFromFinishedSiblingsAndCanMislead) {
  const std::vector<std::string> sets = {"rollout_batch_size=3", "engine.max_running=2"};
  const std::vector<base::GroupSpec> trace = {group("A", {2, 9}), group("B", {4, 3}), group("C", {1, 1})};
  expect_ms(rollout_ms("sync", sets, trace, 1), 10);
  expect_ms(rollout_ms("seer", sets, trace, 1), 13);
}

// The pool alone balances engines: two engines holding 1 request each,
// B = 3 groups of one sample: A (8), B (4), C (4).
//  sync: the router sends A, B, C to engines 0, 1, 0 at submission; engine 0
//    runs A then C: 12 ms.
//  Seer's pool (either order): A and B go, C is held; at 4 B ends and C goes
//    to the engine with room, engine 1, idle, so at once: 4..8, as A ends.
TEST(Seer, TheGlobalPoolSendsEachSampleToTheEngineThatFreesFirst) {
  const std::vector<base::GroupSpec> trace = {group("A", {8}), group("B", {4}), group("C", {4})};
  const std::vector<std::string> sets = {"rollout_batch_size=3", "n_samples_per_prompt=1", "cluster.gpus=2", "cluster.engines=2",
                                         "engine.max_running=1"};
  expect_ms(rollout_ms("sync", sets, trace, 1), 12);
  expect_ms(rollout_ms("seer", sets, trace, 1), 8);
  auto fifo = sets;
  fifo.push_back("seer.scheduling=fifo");
  expect_ms(rollout_ms("seer", fifo, trace, 1), 8);
}

// Over APRIL the held samples return to the buffer unstarted when the phase
// ends: tokens are conserved, none wasted, every sample decodes exactly its
// trace length, and a resumed group's finished samples give its estimate.
TEST(Seer, OverAprilHeldSamplesGoBackToTheBufferAndTokensAreConserved) {
  const std::vector<std::string> sets = {"rollout_batch_size=2", "april.alpha=2", "engine.max_running=2", "seer.base=april"};
  testing::Fixture f("handcheck", sets);
  scenario::Simulation sim(f.config, f.registry, "seer", with_trace(testing::hand_trace()));
  std::int64_t trained = 0;
  for (int step = 0; step < 12; ++step) trained += sim.step().tokens_trained;
  const auto& loop = sim.loop();
  EXPECT_EQ(loop.total_generated_tok(), loop.total_trained_tok() + loop.total_masked_tok() + loop.total_wasted_tok() + loop.buffered_tok());
  EXPECT_EQ(trained, loop.total_trained_tok());
  EXPECT_EQ(loop.total_wasted_tok(), 0);
  EXPECT_EQ(loop.held_samples(), 0) << "nothing is held between steps";
}

// With no cap on running requests nothing is held: the pool only orders one
// instant's submissions (probes first), and every engine takes them all.
TEST(Seer, WithNoCapNothingIsHeld) {
  const std::vector<std::string> sets = {"rollout_batch_size=2", "engine.max_running=0"};
  const std::vector<base::GroupSpec> trace = {group("p0", {3, 5}), group("p1", {10, 2})};
  EXPECT_EQ(rollout_ms("seer", sets, trace, 1), rollout_ms("sync", sets, trace, 1));
}

// The contract's errors are the policy's bugs, reported in words.
TEST(Seer, TheDispatchQueueRefusesAPolicysMistakes) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2", "engine.max_running=2"});
  using Subs = std::vector<policies::Submission>;
  const auto error_of = [&](testing::PlanningPolicy::Plan plan) {
    return testing::first_step_error(f, 2, std::move(plan), testing::hand_trace());
  };
  const std::string hold_all = error_of([](const Subs& subs) {
    policies::SubmissionPlan p;
    p.hold.assign(subs.size(), 1);
    return p;
  });
  EXPECT_NE(hold_all.find("nothing at the engines"), std::string::npos) << hold_all;
  const std::string wrong_size = error_of([](const Subs&) {
    policies::SubmissionPlan p;
    p.hold.assign(1, 1);
    return p;
  });
  EXPECT_NE(wrong_size.find("held 1 of 4 submissions"), std::string::npos) << wrong_size;
  const std::string unheld = error_of([](const Subs& subs) {
    policies::SubmissionPlan p;
    p.release.push_back({subs.front().group, subs.front().sample});
    return p;
  });
  EXPECT_NE(unheld.find("which is not held"), std::string::npos) << unheld;
}

}  // namespace
}  // namespace april

namespace april {
namespace {

// Divided rollout, B = 1 of n = 1 over APRIL at alpha 2, one engine holding
// 1 request: A (5) and B (1), chunks of 2.
//  whole requests: the probe A runs 0..5 (B waits in the pool), and A's
//    group is the batch at 5.
//  chunks: A runs 0..2 and its chunk ends with 2 tokens; the probes rank by
//    tokens held, so B (0) goes before A (2): 2..3, and B's group is the
//    batch at 3. A returns to the buffer with its 2 tokens.
TEST(Seer, DividedRolloutLetsTheProbesTakeTurnsChunkByChunk) {
  const std::vector<base::GroupSpec> trace = {group("A", {5}), group("B", {1})};
  std::vector<std::string> sets = {"rollout_batch_size=1", "n_samples_per_prompt=1", "engine.max_running=1", "seer.base=april",
                                   "april.alpha=2"};
  expect_ms(rollout_ms("seer", sets, trace, 1), 5);
  sets.push_back("seer.chunk_tok=2");
  expect_ms(rollout_ms("seer", sets, trace, 1), 3);
}

// A chunk's KV: one sample of 5 tokens (prompt 8) in chunks of 2, alone on
// the engine: chunks 0..2, 2..4, 4..5 either way. With the global pool only
// the first chunk prefills (8 tokens); re-prefilling costs 8 + (8 + 2) +
// (8 + 4) = 30. Every token is decoded once.
TEST(Seer, AChunksKvFollowsItThroughTheGlobalPoolOrIsPrefilledAgain) {
  const std::vector<base::GroupSpec> trace = {group("A", {5})};
  for (const std::string kv : {"pool", "reprefill"}) {
    testing::Fixture f(
        "handcheck", {"rollout_batch_size=1", "n_samples_per_prompt=1", "engine.max_running=1", "seer.chunk_tok=2", "seer.chunk_kv=" + kv});
    scenario::Simulation sim(f.config, f.registry, "seer", with_trace(trace));
    const rl::StepMetrics m = sim.step();
    EXPECT_DOUBLE_EQ(m.rollout_time_s * 1e3, 5) << kv;
    EXPECT_EQ(m.tokens_generated, 5) << kv;
    EXPECT_EQ(sim.backend().counters().prefill_tok, kv == "pool" ? 8 : 30) << kv;
  }
}

// Chunks need a backend that says where a request stopped: the loop refuses
// chunks on one that does not (the live and HTTP backends), and a policy
// that chunks without taking the events that release the chunks.
TEST(Seer, ChunksNeedSampleEventsAndABackendThatReportsChunkEnds) {
  class ChunkingWithoutEvents final : public policies::Policy {
   public:
    policies::Decisions on_step_start(const policies::RolloutView&) override { return {}; }
    policies::Decisions on_group_accepted(const policies::RolloutView&, policies::GroupId) override { return {}; }
    policies::Decisions on_group_rejected(const policies::RolloutView&, policies::GroupId) override { return {}; }
    [[nodiscard]] std::int32_t chunk_tok() const override { return 4; }
  };
  testing::Fixture f("handcheck", {"rollout_batch_size=1"});
  f.registry.add({"chunking", "chunks without events", {}, [](const base::Config&) { return std::make_unique<ChunkingWithoutEvents>(); }});
  try {
    scenario::Simulation sim(f.config, f.registry, "chunking", with_trace(testing::hand_trace()));
    ADD_FAILURE() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("must take sample events"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace april
