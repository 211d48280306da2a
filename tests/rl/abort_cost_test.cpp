// The cost of an abort (docs/design.md 3: APRIL's rollout time includes it),
// worked by hand on two engines whose iterations are out of phase.
#include <gtest/gtest.h>

#include <memory>

#include "adapters/sim/sim_backend.hpp"
#include "sim/iteration_model.hpp"

namespace april::adapters {
namespace {

// Linear model: a prefill pass costs 1 ms; a decode iteration 1 ms + 1 ms per
// decoding request. Prompts of 4 tokens.
//   k0 (EOS at 2) and k2 (EOS at 50) go to engine 0, k1 (EOS at `k1_eos`) to
//   engine 1 (least outstanding, ties to the lower index).
//   Engine 0: prefill 0-1 ms (k0, k2 at 1 token), decode of 2 every 3 ms:
//     k0 reaches 2 tokens at 4 ms and finishes; then decode of 1 every 2 ms:
//     boundaries at 6, 8, 10 ms (k2 at 3, 4, 5 tokens).
//   Engine 1: prefill 0-1 ms, decode of 1 every 2 ms: boundaries at 3, 5, 7 ms
//     (k1 at 2, 3, 4 tokens).
// The batch forms at 4 ms (k0 finished) and the loop aborts.
struct AbortRun {
  std::vector<SampleProgress> aborted;
  double abort_end_s = 0;
};

AbortRun run(double latency_s, double per_request_s, std::int32_t k1_eos, bool fast_forward, double confirm_s = 0) {
  sim::LinearIterationParams p;
  p.base_ns = 1000000;
  p.per_request_ns = 1000000;
  p.prefill_base_ns = 1000000;
  SimBackendConfig c;
  c.engines = 2;
  c.engine.kv_capacity_tok = 1 << 20;
  c.engine.fast_forward = fast_forward;
  c.abort_latency_s = latency_s;
  c.abort_per_request_s = per_request_s;
  c.abort_confirm_s = confirm_s;
  SimBackend b(c, std::make_shared<sim::LinearIterationModel>(p));
  const std::int32_t eos[3] = {2, k1_eos, 50};
  for (std::uint64_t k = 0; k < 3; ++k) b.submit({k, "p", 4, 0, 100, eos[k]});
  const auto first = b.wait_for_completions();
  EXPECT_EQ(first.size(), 1U);
  EXPECT_EQ(first.at(0).key, 0U);
  EXPECT_DOUBLE_EQ(b.now_s(), 0.004);
  AbortRun r;
  r.aborted = b.abort_all();
  r.abort_end_s = b.now_s();
  return r;
}

// Latency 2.5 ms: the abort reaches the engines at 6.5 ms. Engine 0 is in
// its 6-8 ms iteration, stops at 8 ms with k2 at 4 tokens and releases it in
// 0.5 ms (8.5 ms); engine 1 is in its 5-7 ms iteration, stops at 7 ms with k1
// at 4 tokens and releases it (7.5 ms). The abort ends at 8.5 ms.
TEST(AbortCost, EnginesStopAtTheirBoundaryAfterTheLatencyThenReleaseTheirRequests) {
  for (bool ff : {true, false}) {
    const AbortRun r = run(0.0025, 0.0005, 50, ff);
    EXPECT_NEAR(r.abort_end_s, 0.0085, 1e-12) << "fast_forward=" << ff;
    ASSERT_EQ(r.aborted.size(), 2U);
    EXPECT_EQ(r.aborted[0].key, 2U);  // engine 0 first
    EXPECT_EQ(r.aborted[0].new_tok, 4);
    EXPECT_FALSE(r.aborted[0].finished);
    EXPECT_EQ(r.aborted[1].key, 1U);
    EXPECT_EQ(r.aborted[1].new_tok, 4);
    EXPECT_FALSE(r.aborted[1].finished);
  }
}

// The controller learns of the idle engines 1 ms later (a poll): 9.5 ms, and
// nothing more is generated in that millisecond.
TEST(AbortCost, TheConfirmationWaitIsIdleTime) {
  const AbortRun r = run(0.0025, 0.0005, 50, true, 0.001);
  EXPECT_NEAR(r.abort_end_s, 0.0095, 1e-12);
  ASSERT_EQ(r.aborted.size(), 2U);
  EXPECT_EQ(r.aborted[0].new_tok, 4);
  EXPECT_EQ(r.aborted[1].new_tok, 4);
}

// k1's EOS at 4 tokens: it finishes in the 5-7 ms iteration the abort lets
// run, so it comes back complete; engine 1 then holds nothing to release.
TEST(AbortCost, ASampleThatFinishesWhileTheAbortTakesEffectIsComplete) {
  for (bool ff : {true, false}) {
    const AbortRun r = run(0.0025, 0.0005, 4, ff);
    EXPECT_NEAR(r.abort_end_s, 0.0085, 1e-12);
    ASSERT_EQ(r.aborted.size(), 2U);
    EXPECT_EQ(r.aborted[0].key, 1U);  // finished ones first
    EXPECT_TRUE(r.aborted[0].finished);
    EXPECT_EQ(r.aborted[0].new_tok, 4);
    EXPECT_EQ(r.aborted[1].key, 2U);
    EXPECT_FALSE(r.aborted[1].finished);
  }
}

// No latency: engine 0 is at its boundary (its next iteration would start at
// 4 ms) and stops there with k2 at 2 tokens; engine 1 finishes its 3-5 ms
// iteration (k1 at 3). Releases: 4.5 and 5.5 ms. With no release cost either,
// the abort is the wait for engine 1's boundary: 5 ms.
TEST(AbortCost, WithoutLatencyOnlyTheBoundaryAndTheReleasesCount) {
  for (bool ff : {true, false}) {
    AbortRun r = run(0, 0.0005, 50, ff);
    EXPECT_NEAR(r.abort_end_s, 0.0055, 1e-12);
    ASSERT_EQ(r.aborted.size(), 2U);
    EXPECT_EQ(r.aborted[0].new_tok, 2);
    EXPECT_EQ(r.aborted[1].new_tok, 3);
    r = run(0, 0, 50, ff);
    EXPECT_NEAR(r.abort_end_s, 0.005, 1e-12);
  }
}

// Nothing in flight: no abort is sent, the clock does not move.
TEST(AbortCost, NothingInFlightCostsNothing) {
  SimBackendConfig c;
  c.engine.kv_capacity_tok = 1000;
  c.abort_latency_s = 1;
  SimBackend b(c, std::make_shared<sim::ConstantIterationModel>(1000000));
  b.submit({0, "p", 4, 0, 10, 3});
  (void)b.wait_for_completions();
  const double t = b.now_s();
  EXPECT_TRUE(b.abort_all().empty());
  EXPECT_DOUBLE_EQ(b.now_s(), t);
}

}  // namespace
}  // namespace april::adapters
