// The timeline of a run (rl/run_timeline.hpp) against schedules worked by
// hand. The handcheck scenario: one engine, every iteration 1 ms, each
// running request gains a token per iteration (a sample of N tokens finishes
// at N ms after its start), no prefill cost; train 5 ms (a linear model's
// base), sync 2 ms (fixed). B = 2 groups of n = 2 from a trace:
//   a [3, 5], b [2, 10], c [4, 4], d [20, 30].
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "base/chrome_trace.hpp"
#include "policies/registry.hpp"
#include "rl/run_timeline.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation.hpp"

namespace april {
namespace {

struct Span {
  double ts_us = -1, dur_us = -1;
  nlohmann::json args;
};

class Timeline {
 public:
  Timeline(const std::string& policy, std::int64_t steps, double abort_latency_s, rl::TimelineDetail detail, std::int64_t max_running = 0) {
    const auto registry = policies::builtin_policies();
    const auto schema = scenario::make_schema(registry);
    base::Config c(schema);
    scenario::apply_scenario(c, "handcheck");
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{{"rollout_batch_size", "2"},
                                                                               {"n_samples_per_prompt", "2"},
                                                                               {"train.time_model", "linear"},
                                                                               {"train.linear_base_s", "0.005"},
                                                                               {"sync.time_model", "fixed"},
                                                                               {"sync.latency_s", "0.002"},
                                                                               {"engine.abort_latency_s", std::to_string(abort_latency_s)},
                                                                               {"engine.max_running", std::to_string(max_running)},
                                                                               {"steps", std::to_string(steps)}}) {
      c.set_from_text(k, v, "test");
    }
    scenario::RunOptions ro;
    ro.trace = std::vector<base::GroupSpec>{{"a", 4, {3, 5}, {}}, {"b", 4, {2, 10}, {}}, {"c", 4, {4, 4}, {}}, {"d", 4, {20, 30}, {}}};
    ro.trace_name = "hand";
    ro.record_timeline = true;
    ro.record_windows = detail == rl::TimelineDetail::kWindows;
    const auto run = scenario::simulate(c, registry, policy, ro);
    base::ChromeTrace trace;
    rl::RunTimeline timeline{policy, 1, &run.steps, &run.timeline};
    timeline.engine_windows = &run.windows;
    rl::add_run_timeline(trace, timeline, 1, detail);
    doc_ = nlohmann::json::parse(trace.text());
  }
  // The one event of phase `ph` named `name` (fails the test otherwise).
  [[nodiscard]] Span one(const std::string& ph, const std::string& name) const {
    Span s;
    int found = 0;
    for (const auto& e : doc_["traceEvents"]) {
      if (e["ph"] != ph || e["name"] != name) continue;
      ++found;
      s.ts_us = e["ts"].get<double>();
      s.dur_us = e.contains("dur") ? e["dur"].get<double>() : 0.0;
      s.args = e.value("args", nlohmann::json::object());
    }
    EXPECT_EQ(found, 1) << ph << " " << name;
    return s;
  }
  [[nodiscard]] std::vector<Span> all(const std::string& ph, const std::string& name) const {
    std::vector<Span> out;
    for (const auto& e : doc_["traceEvents"]) {
      if (e["ph"] == ph && e["name"] == name)
        out.push_back({e["ts"].get<double>(), e.value("dur", 0.0), e.value("args", nlohmann::json::object())});
    }
    return out;
  }
  [[nodiscard]] const nlohmann::json& doc() const { return doc_; }

 private:
  nlohmann::json doc_;
};

// sync: step 0 runs a and b; the last sample (b's 10 tokens) ends the
// rollout at 10 ms; train 10-15, sync 15-17. Step 1 runs c and d from 17 ms:
// d's 30 tokens end it at 47; train 47-52, sync 52-54. The engine is busy
// 0-10 and 17-47 and idle while the trainer and the sync run.
TEST(RunTimeline, SyncStepsMatchTheHandWorkedSchedule) {
  const Timeline t("sync", 2, 0.0, rl::TimelineDetail::kSteps);
  EXPECT_DOUBLE_EQ(t.one("X", "rollout 0").ts_us, 0);
  EXPECT_DOUBLE_EQ(t.one("X", "rollout 0").dur_us, 10000);
  EXPECT_DOUBLE_EQ(t.one("X", "train 0").ts_us, 10000);
  EXPECT_DOUBLE_EQ(t.one("X", "train 0").dur_us, 5000);
  EXPECT_DOUBLE_EQ(t.one("X", "sync to version 1").ts_us, 15000);
  EXPECT_DOUBLE_EQ(t.one("X", "sync to version 1").dur_us, 2000);
  EXPECT_DOUBLE_EQ(t.one("i", "step 0 done").ts_us, 17000);
  EXPECT_DOUBLE_EQ(t.one("X", "rollout 1").ts_us, 17000);
  EXPECT_DOUBLE_EQ(t.one("X", "rollout 1").dur_us, 30000);
  EXPECT_DOUBLE_EQ(t.one("X", "sync to version 2").ts_us, 52000);
  EXPECT_DOUBLE_EQ(t.one("i", "step 1 done").ts_us, 54000);
  EXPECT_EQ(t.one("i", "step 1 done").args["tokens_trained"], 4 + 4 + 20 + 30);  // c and d's response tokens
  const auto busy = t.all("X", "busy");
  ASSERT_EQ(busy.size(), 2U);
  EXPECT_DOUBLE_EQ(busy[0].ts_us, 0);
  EXPECT_DOUBLE_EQ(busy[0].dur_us, 10000);  // idle from 10 to 17 ms
  EXPECT_EQ(busy[0].args["peak_running"], 4);
  EXPECT_DOUBLE_EQ(busy[1].ts_us, 17000);
  EXPECT_DOUBLE_EQ(busy[1].dur_us, 30000);
  EXPECT_TRUE(t.all("X", "abort").empty());  // sync waits for every sample
  // The linear train model's time is one phase ("other"), inside the train span.
  const auto phases = t.all("X", "other");
  ASSERT_EQ(phases.size(), 2U);
  EXPECT_DOUBLE_EQ(phases[0].ts_us, 10000);
  EXPECT_DOUBLE_EQ(phases[0].dur_us, 5000);
  EXPECT_EQ(t.one("X", "train 1").args["trainer_version"], 1);
  EXPECT_EQ(t.one("X", "train 1").args["oldest_version"], 1);  // sync: on-policy
  // The engines' side of the syncs: received 15-17 and 52-54 ms.
  EXPECT_DOUBLE_EQ(t.one("X", "version 1").ts_us, 15000);
  EXPECT_DOUBLE_EQ(t.one("X", "version 1").dur_us, 2000);
  EXPECT_DOUBLE_EQ(t.one("X", "version 2").ts_us, 52000);
}

// APRIL (alpha 2: B' = 4 groups, all eight samples at 0 ms): c completes at
// 4 ms, a at 5 ms, and the batch forms. The abort reaches the engine 1.5 ms
// later (6.5 ms), in its 6-7 ms iteration; it stops at 7 ms with b's second
// sample and d's two at 7 tokens. Abort 5-7 ms, two groups aborted, b and d
// buffered with 2 + 7 + 7 + 7 = 23 tokens; train 7-12, sync 12-14.
TEST(RunTimeline, AprilShowsTheAbortItsCostAndWhatItCut) {
  const Timeline t("april", 1, 0.0015, rl::TimelineDetail::kSteps);
  EXPECT_DOUBLE_EQ(t.one("X", "rollout 0").dur_us, 5000);
  const Span abort = t.one("X", "abort");
  EXPECT_DOUBLE_EQ(abort.ts_us, 5000);
  EXPECT_DOUBLE_EQ(abort.dur_us, 2000);
  EXPECT_EQ(abort.args["groups_aborted"], 2);
  EXPECT_EQ(abort.args["buffer_tokens"], 23);
  EXPECT_DOUBLE_EQ(t.one("X", "train 0").ts_us, 7000);
  EXPECT_DOUBLE_EQ(t.one("X", "sync to version 1").ts_us, 12000);
  EXPECT_DOUBLE_EQ(t.one("X", "busy").dur_us, 7000);
  EXPECT_EQ(t.one("X", "busy").args["peak_running"], 8);
}

// APRIL's second step resumes b and d first: an instant at its start.
TEST(RunTimeline, AprilMarksTheResumedPartials) {
  const Timeline t("april", 2, 0.0015, rl::TimelineDetail::kSteps);
  const Span resumed = t.one("i", "resumed partials");
  EXPECT_DOUBLE_EQ(resumed.ts_us, 14000);  // step 1 starts where step 0's sync ended
  EXPECT_GT(resumed.args["tokens_carried"].get<std::int64_t>(), 0);
}

// The finer detail adds the requests and KV counters at every change:
// sync's step 0 goes 4 -> 3 (2 ms) -> 2 (3 ms) -> 1 (5 ms) -> 0 (10 ms)
// running, none queued.
TEST(RunTimeline, ChangesDetailCountsRunningRequests) {
  const Timeline t("sync", 1, 0.0, rl::TimelineDetail::kChanges);
  const auto counter = t.all("C", "requests e0");
  ASSERT_EQ(counter.size(), 5U);
  const double at_ms[] = {0, 2, 3, 5, 10};
  const int running[] = {4, 3, 2, 1, 0};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(counter[i].ts_us, at_ms[i] * 1000) << i;
    EXPECT_EQ(counter[i].args["running"], running[i]) << i;
    EXPECT_EQ(counter[i].args["queued"], 0) << i;
  }
  EXPECT_TRUE(Timeline("sync", 1, 0.0, rl::TimelineDetail::kSteps).all("C", "requests e0").empty());
}

// Two running slots (engine.max_running 2), prompts of 4 tokens held in the
// KV cache from admission: a's two samples start at 0 ms (KV 8), b's queue.
// a0 ends at 3 ms (3 tokens) and b0 takes its slot: running 2, queued 1, KV
// a1's 4 + 3 and b0's 4 = 11. At 5 ms a1 (5 tokens) and b0 (2) end and b1
// starts alone (KV 4); its 10 tokens end the step at 15 ms.
TEST(RunTimeline, QueuedRequestsAndKvTokensAreCounted) {
  const Timeline t("sync", 1, 0.0, rl::TimelineDetail::kChanges, 2);
  const auto requests = t.all("C", "requests e0"), kv = t.all("C", "KV tokens e0");
  ASSERT_EQ(requests.size(), 4U);
  ASSERT_EQ(kv.size(), 4U);
  const double at_ms[] = {0, 3, 5, 15};
  const int running[] = {2, 2, 1, 0}, queued[] = {2, 1, 0, 0}, kv_tok[] = {8, 11, 4, 0};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(requests[i].ts_us, at_ms[i] * 1000) << i;
    EXPECT_EQ(requests[i].args["running"], running[i]) << i;
    EXPECT_EQ(requests[i].args["queued"], queued[i]) << i;
    EXPECT_EQ(kv[i].args["kv_tok"], kv_tok[i]) << i;
  }
}

// Windows in place of busy spans. Sync's step 0: the four samples (prompts
// of 4 tokens) are admitted at 0 ms in one prefill iteration (16 context
// tokens, a first token each), then decode windows run until a batch
// changes: 4 running to b0's end at 2 ms, 3 to a0's at 3 ms, 2 to a1's at
// 5 ms, b1 alone to 10 ms. KV tokens at each window's start: the 16 prompt
// tokens, one more per running request and iteration, less what a finished
// request held (prompt + response): 16 + 4 = 20 at 1 ms; 24 - b0's 6 = 18 at
// 2 ms; 21 - a0's 7 = 14 at 3 ms; 18 - a1's 9 = 9 at 5 ms.
// Idle 10-17 ms (train, sync); step 1 (c [4, 4], d [20, 30]) from 17 ms.
TEST(RunTimeline, WindowsDetailShowsPrefillAndDecodeWindows) {
  const Timeline t("sync", 2, 0.0, rl::TimelineDetail::kWindows);
  EXPECT_TRUE(t.all("X", "busy").empty());
  const auto prefill = t.all("X", "prefill");
  ASSERT_EQ(prefill.size(), 2U);
  EXPECT_DOUBLE_EQ(prefill[0].ts_us, 0);
  EXPECT_DOUBLE_EQ(prefill[0].dur_us, 1000);
  EXPECT_EQ(prefill[0].args["batch"], 4);
  EXPECT_EQ(prefill[0].args["prefill_requests"], 4);
  EXPECT_EQ(prefill[0].args["prefill_tok"], 16);
  EXPECT_EQ(prefill[0].args["kv_tok"], 16);
  EXPECT_DOUBLE_EQ(prefill[1].ts_us, 17000);
  const auto decode = t.all("X", "decode");
  ASSERT_EQ(decode.size(), 7U);
  const double at_ms[] = {1, 2, 3, 5, 18, 21, 37}, dur_ms[] = {1, 1, 2, 5, 3, 16, 10};
  const int batch[] = {4, 3, 2, 1, 4, 2, 1}, kv_tok[] = {20, 18, 14, 9, 20, 16, 24};
  for (std::size_t i = 0; i < decode.size(); ++i) {
    EXPECT_DOUBLE_EQ(decode[i].ts_us, at_ms[i] * 1000) << i;
    EXPECT_DOUBLE_EQ(decode[i].dur_us, dur_ms[i] * 1000) << i;
    EXPECT_EQ(decode[i].args["batch"], batch[i]) << i;
    EXPECT_EQ(decode[i].args["iterations"], dur_ms[i]) << i;  // 1 ms an iteration
    EXPECT_EQ(decode[i].args["kv_tok"], kv_tok[i]) << i;
    EXPECT_FALSE(decode[i].args.contains("prefill_tok")) << i;
  }
  EXPECT_TRUE(Timeline("sync", 1, 0.0, rl::TimelineDetail::kChanges).all("X", "decode").empty());
}

// APRIL's abort as the engine lives it (the schedule above): eight samples
// admitted at 0 ms; c's two end at 4 ms; the batch forms at 5 ms, and the
// engine decodes on through the abort's 1.5 ms latency to the boundary at
// 7 ms, where it stops with b1, d0 and d1: one window of 2 iterations, 5-7 ms.
TEST(RunTimeline, AprilWindowsRunThroughTheAbortLatency) {
  const Timeline t("april", 1, 0.0015, rl::TimelineDetail::kWindows);
  const auto prefill = t.all("X", "prefill");
  ASSERT_EQ(prefill.size(), 1U);
  EXPECT_EQ(prefill[0].args["prefill_requests"], 8);
  const auto decode = t.all("X", "decode");
  ASSERT_FALSE(decode.empty());
  EXPECT_DOUBLE_EQ(decode.back().ts_us, 5000);
  EXPECT_DOUBLE_EQ(decode.back().dur_us, 2000);
  EXPECT_EQ(decode.back().args["batch"], 3);
  EXPECT_EQ(decode.back().args["iterations"], 2);
  EXPECT_DOUBLE_EQ(decode.back().ts_us + decode.back().dur_us, t.one("X", "abort").ts_us + t.one("X", "abort").dur_us);
}

// The format's fields (Trace Event Format): every event has ph, name, pid
// and tid; all but metadata a ts; spans a dur; instants a scope; times in
// microseconds with the nanoseconds exact.
TEST(RunTimeline, EveryEventHasTheFormatsFields) {
  const Timeline t("april", 1, 0.0015, rl::TimelineDetail::kChanges);
  ASSERT_TRUE(t.doc().contains("traceEvents"));
  for (const auto& e : t.doc()["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("name") && e.contains("pid") && e.contains("tid")) << e.dump();
    const std::string ph = e["ph"];
    if (ph != "M") {
      EXPECT_TRUE(e["ts"].is_number()) << e.dump();
    }
    if (ph == "X") {
      EXPECT_GE(e["dur"].get<double>(), 0) << e.dump();
    }
    if (ph == "i") {
      EXPECT_EQ(e["s"], "t") << e.dump();
    }
  }
  EXPECT_EQ(base::ChromeTrace::microseconds(1234567), "1234.567");
  EXPECT_EQ(base::ChromeTrace::microseconds(5), "0.005");
  EXPECT_EQ(rl::seconds_to_ns(0.007), 7000000);
}

// A live run's clock runs on while other work takes its turn: steps 0-3 s
// and 10-12 s (a 7 s gap) laid end to end give 0-3 and 3-5 s, every time of
// the second step moved by the gap, the first untouched.
TEST(RunTimeline, GapsBetweenStepsAreTakenOut) {
  std::vector<rl::StepMetrics> steps(2);
  steps[0].start_time_s = 0, steps[0].batch_ready_s = 1, steps[0].train_start_s = 1, steps[0].train_end_s = 2.5, steps[0].sync_end_s = 3;
  steps[1].start_time_s = 10, steps[1].batch_ready_s = 11, steps[1].train_start_s = 11, steps[1].train_end_s = 11.5,
  steps[1].sync_end_s = 12;
  const auto laid = rl::without_gaps_between_steps(steps);
  EXPECT_DOUBLE_EQ(laid[0].sync_end_s, 3);
  EXPECT_DOUBLE_EQ(laid[1].start_time_s, 3);
  EXPECT_DOUBLE_EQ(laid[1].batch_ready_s, 4);
  EXPECT_DOUBLE_EQ(laid[1].train_end_s, 4.5);
  EXPECT_DOUBLE_EQ(laid[1].sync_end_s, 5);
}

// A modelled train step's phases, one after another inside its span and
// scaled to it: 1 s old log-prob, 3 s update and 1 s optimizer in a step
// that took 10 s of wall time (slowed beside the engines) are 10-12, 12-18
// and 18-20 s; a phase of zero is not drawn.
TEST(RunTimeline, TrainPhasesFillTheTrainSpan) {
  std::vector<rl::StepMetrics> steps(1);
  steps[0].train_start_s = 10, steps[0].train_end_s = 20, steps[0].sync_end_s = 20;
  rl::TrainPhases p;
  p.old_logprob_s = 1, p.update_s = 3, p.optimizer_s = 1;
  steps[0].train_phases = p;
  base::ChromeTrace trace;
  rl::add_run_timeline(trace, {"x", 0, &steps, nullptr}, 1, rl::TimelineDetail::kSteps);
  const auto doc = nlohmann::json::parse(trace.text());
  std::vector<std::tuple<std::string, double, double>> got;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["tid"] == 2) got.emplace_back(e["name"], e["ts"].get<double>(), e["dur"].get<double>());
  }
  const std::vector<std::tuple<std::string, double, double>> want = {
      {"train 0", 10e6, 10e6}, {"old log-prob", 10e6, 2e6}, {"update", 12e6, 6e6}, {"optimizer", 18e6, 2e6}};
  EXPECT_EQ(got, want);
}

// The engine's records move with the steps: a change at 0.5 s stays, one at
// 10.5 s (in step 1) moves to 3.5 s, one at 6 s (in the gap, the engine
// waiting) to step 0's end at 3 s; a window 10.2-10.7 s moves to 3.2-3.7 s.
TEST(RunTimeline, EngineRecordsMoveWithTheSteps) {
  std::vector<rl::StepMetrics> steps(2);
  steps[0].start_time_s = 0, steps[0].sync_end_s = 3;
  steps[1].start_time_s = 10, steps[1].sync_end_s = 12;
  std::vector<rl::EngineRunningChange> changes(3);
  changes[0].time_ns = 500000000, changes[1].time_ns = 6000000000, changes[2].time_ns = 10500000000;
  std::vector<rl::EngineWindowSpan> windows(1);
  windows[0].start_ns = 10200000000, windows[0].end_ns = 10700000000;
  rl::remove_gaps_between_steps(steps, changes, windows);
  EXPECT_EQ(changes[0].time_ns, 500000000);
  EXPECT_EQ(changes[1].time_ns, 3000000000);
  EXPECT_EQ(changes[2].time_ns, 3500000000);
  EXPECT_EQ(windows[0].start_ns, 3200000000);
  EXPECT_EQ(windows[0].end_ns, 3700000000);
}

}  // namespace
}  // namespace april
