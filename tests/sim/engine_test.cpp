#include <gtest/gtest.h>

#include <map>

#include "sim/engine.hpp"

namespace april::sim {
namespace {

struct Recorder final : EngineListener {
  Simulator* sim = nullptr;
  std::map<RequestKey, std::pair<std::int64_t, std::int32_t>> done;  // key -> (time ns, new tokens)
  std::map<RequestKey, TokensByVersion> versions;
  void on_request_finished(std::size_t, RequestKey key, std::int32_t new_tok, TokensByVersion by_version, bool) override {
    done[key] = {sim->now().ns(), new_tok};
    versions[key] = std::move(by_version);
  }
};

struct EngineRun {
  std::map<RequestKey, std::pair<std::int64_t, std::int32_t>> done;
  EngineCounters counters;
};

EngineRun run_tiny_kv(bool fast_forward) {
  Simulator sim;
  ConstantIterationModel model(1000000);  // 1 ms
  Recorder rec;
  rec.sim = &sim;
  Engine e(0, sim, model, EngineConfig{0, 60, fast_forward}, rec);
  for (RequestKey k = 0; k < 3; ++k) e.submit({k, 10, 0, 20});
  while (sim.step()) {
  }
  return {rec.done, e.counters()};
}

// Capacity 60 tokens, three requests of prompt 10 generating 20 each:
// all three fit at first (30 resident), grow by 3 per iteration, and at 60
// the newest is preempted; the other two finish at 20 ms, then the preempted
// one re-prefills 10 + 10 tokens and finishes its last 10 at 30 ms.
TEST(Engine, KvOverflowPreemptsTheNewestRequestWhichResumesLater) {
  for (bool ff : {true, false}) {
    const EngineRun r = run_tiny_kv(ff);
    EXPECT_EQ(r.counters.preemptions, 1) << "fast_forward=" << ff;
    ASSERT_EQ(r.done.size(), 3U);
    EXPECT_EQ(r.done.at(0), std::make_pair(std::int64_t{20000000}, 20));
    EXPECT_EQ(r.done.at(1), std::make_pair(std::int64_t{20000000}, 20));
    EXPECT_EQ(r.done.at(2), std::make_pair(std::int64_t{30000000}, 20));
    EXPECT_EQ(r.counters.prefill_tok, 10 + 10 + 10 + 20);  // the preempted one re-prefills 20
    EXPECT_EQ(r.counters.iterations, 30);
    EXPECT_EQ(r.counters.busy_ns, 30000000);
  }
}

TEST(Engine, RunningCapQueuesRequests) {
  Simulator sim;
  ConstantIterationModel model(1000);
  Recorder rec;
  rec.sim = &sim;
  Engine e(0, sim, model, EngineConfig{2, 1 << 20, true}, rec);
  e.submit({0, 1, 0, 5});
  e.submit({1, 1, 0, 3});
  e.submit({2, 1, 0, 4});  // waits for a slot: joins at 3 us, ends at 7 us
  while (sim.step()) {
  }
  EXPECT_EQ(rec.done.at(1).first, 3000);
  EXPECT_EQ(rec.done.at(0).first, 5000);
  EXPECT_EQ(rec.done.at(2).first, 7000);
  EXPECT_EQ(e.counters().running_ns, 2 * 5000 + 1 * 2000);  // 2 running for 5 us, then 1 for 2 us
}

TEST(Engine, AbortReturnsProgressOfCompleteIterationsOnly) {
  for (bool ff : {true, false}) {
    Simulator sim;
    ConstantIterationModel model(1000);
    Recorder rec;
    rec.sim = &sim;
    Engine e(0, sim, model, EngineConfig{0, 1 << 20, ff}, rec);
    e.submit({7, 4, 3, 100});      // resumed: holds 3 tokens
    sim.run_until(TimeNs(42500));  // 42 complete iterations, the 43rd half done
    const auto aborted = e.abort_all();
    ASSERT_EQ(aborted.size(), 1U);
    EXPECT_EQ(aborted[0].new_tok, 42);
    EXPECT_EQ(e.counters().busy_ns, 42500);
    EXPECT_EQ(e.outstanding(), 0U);
  }
}

// Laminar's repack: engine A's request (prompt 4, resumed with 3 tokens, to
// stop at 10) runs 1 us iterations and is taken at 2.5 us: 2 complete
// iterations, 2 tokens of version 0 (the third is lost). Engine B, at version
// 1, adopts it: it re-prefills 4 + 5 tokens in its first pass (yielding token
// 6) and ends at 10 after 5 iterations, 2.5-7.5 us, reporting 7 new tokens
// since its first submission: 2 of version 0, 5 of version 1.
TEST(Engine, ATakenRequestFinishesOnTheEngineThatAdoptsItWithItsTokensAndVersions) {
  for (bool ff : {true, false}) {
    Simulator sim;
    ConstantIterationModel model(1000);
    Recorder rec;
    rec.sim = &sim;
    Engine a(0, sim, model, EngineConfig{0, 1 << 20, ff}, rec);
    Engine b(1, sim, model, EngineConfig{0, 1 << 20, ff}, rec);
    b.pause();
    b.resume(1, false);
    a.submit({7, 4, 3, 10});
    sim.run_until(TimeNs(2500));
    auto taken = a.take_all();
    ASSERT_EQ(taken.size(), 1U);
    EXPECT_EQ(a.outstanding(), 0U);
    EXPECT_EQ(taken[0].req.generated_tok, 5);
    const auto prefill_before = b.counters().prefill_tok;
    b.adopt(std::move(taken[0]));
    b.start_if_idle();
    while (sim.step()) {
    }
    ASSERT_EQ(rec.done.count(7), 1U) << "fast_forward=" << ff;
    EXPECT_EQ(rec.done.at(7), std::make_pair(std::int64_t{7500}, 7)) << "fast_forward=" << ff;
    EXPECT_EQ(b.counters().prefill_tok - prefill_before, 4 + 5);
    EXPECT_EQ(rec.versions.at(7), (TokensByVersion{{0, 2}, {1, 5}})) << "fast_forward=" << ff;
  }
}

// A weight sync (docs/design.md 3b) with 1 ms iterations, one request of 10
// tokens (prompt 4), pause at 2.5 ms, resume at 4.5 ms with version 1:
//   iterations 0-1, 1-2, 2-3 ms run (the third was in progress at the pause
//   and finishes): 3 tokens of version 0; none starts in 3-4.5 ms;
//   keep_kv: iterations resume at 4.5 ms, 7 tokens of version 1, done at 11.5 ms;
//   recompute: the request re-prefills 4 + 3 tokens at 4.5 ms (a prefill pass
//   that yields token 4, constant 1 ms here), same end, 7 more prefill tokens.
TEST(Engine, APausedEngineFinishesItsIterationAndResumesWithTheNewVersion) {
  for (bool ff : {true, false}) {
    for (bool recompute : {false, true}) {
      Simulator sim;
      ConstantIterationModel model(1000000);
      Recorder rec;
      rec.sim = &sim;
      Engine e(0, sim, model, EngineConfig{0, 1000, ff}, rec);
      e.submit({1, 4, 0, 10});
      sim.run_until(TimeNs(2500000));
      e.pause();
      sim.run_until(TimeNs(4500000));
      EXPECT_EQ(e.counters().iterations, 3) << "ff=" << ff;
      EXPECT_EQ(e.counters().busy_ns, 3000000);
      e.resume(1, recompute);
      e.start_if_idle();
      while (sim.step()) {
      }
      ASSERT_EQ(rec.done.count(1), 1U);
      EXPECT_EQ(rec.done.at(1), std::make_pair(std::int64_t{11500000}, 10)) << "ff=" << ff << " recompute=" << recompute;
      EXPECT_EQ(rec.versions.at(1), (TokensByVersion{{0, 3}, {1, 7}}));
      EXPECT_EQ(e.counters().prefill_tok, recompute ? 4 + 7 : 4);
      EXPECT_EQ(e.version(), 1);
    }
  }
}

// An iteration longer than the sync: it began with version 0 and keeps it,
// and with recompute the KV is dropped only when it ends.
TEST(Engine, AnIterationThatOutlastsTheSyncKeepsItsVersion) {
  Simulator sim;
  ConstantIterationModel model(10000000);  // 10 ms
  Recorder rec;
  rec.sim = &sim;
  Engine e(0, sim, model, EngineConfig{0, 1000, true}, rec);
  e.submit({1, 4, 0, 3});
  sim.run_until(TimeNs(1000000));
  e.pause();
  sim.run_until(TimeNs(2000000));  // the sync ends at 2 ms, the iteration at 10 ms
  e.resume(1, true);
  e.start_if_idle();
  while (sim.step()) {
  }
  // 0-10 ms: token 1 (version 0); the KV drop re-prefills 4 + 1 at 10 ms and yields
  // token 2 at 20 ms; token 3 at 30 ms, both version 1.
  EXPECT_EQ(rec.done.at(1), std::make_pair(std::int64_t{30000000}, 3));
  EXPECT_EQ(rec.versions.at(1), (TokensByVersion{{0, 1}, {1, 2}}));
  EXPECT_EQ(e.counters().prefill_tok, 4 + 5);
}

// A request submitted during the pause waits for the resume.
TEST(Engine, ASubmissionDuringAPauseWaitsForTheResume) {
  Simulator sim;
  ConstantIterationModel model(1000000);
  Recorder rec;
  rec.sim = &sim;
  Engine e(0, sim, model, EngineConfig{0, 1000, true}, rec);
  e.pause();
  e.submit({1, 4, 0, 2});
  sim.run_until(TimeNs(5000000));
  EXPECT_EQ(e.counters().iterations, 0);
  e.resume(3, false);
  e.start_if_idle();
  while (sim.step()) {
  }
  EXPECT_EQ(rec.done.at(1), std::make_pair(std::int64_t{7000000}, 2));
  EXPECT_EQ(rec.versions.at(1), (TokensByVersion{{3, 2}}));
}

TEST(Engine, RejectsRequestsThatCanNeverFit) {
  Simulator sim;
  ConstantIterationModel model(1000);
  Recorder rec;
  rec.sim = &sim;
  Engine e(0, sim, model, EngineConfig{0, 100, true}, rec);
  EXPECT_THROW(e.submit({0, 50, 0, 60}), std::invalid_argument);
}

// Per-token prefill: a context of c tokens takes c iterations to yield its
// first token (like `april live` with exact prefill), then one per iteration;
// a resumed request re-feeds its prompt and the tokens it already holds.
TEST(Engine, PerTokenPrefillFeedsContextsOneTokenPerIteration) {
  for (bool ff : {true, false}) {
    Simulator sim;
    ConstantIterationModel model(1000000);
    Recorder rec;
    rec.sim = &sim;
    Engine e(0, sim, model, EngineConfig{0, 1000, ff, true}, rec);
    e.submit({1, 3, 0, 5});  // 3 fed (the third yields token 1), then 4 more: 7 ms
    e.submit({2, 3, 4, 6});  // resumed: 3 + 4 fed (the last yields token 5), then token 6: 8 ms
    while (sim.step()) {
    }
    EXPECT_EQ(rec.done.at(1), std::make_pair(std::int64_t{7000000}, 5)) << "fast_forward=" << ff;
    EXPECT_EQ(rec.done.at(2), std::make_pair(std::int64_t{8000000}, 2)) << "fast_forward=" << ff;
    EXPECT_EQ(e.counters().iterations, 8);
    EXPECT_EQ(e.counters().decoded_tok, 5 + 2);
  }
}

}  // namespace
}  // namespace april::sim
