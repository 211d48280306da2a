// The live backend: its train log, heap, checkpoints and the traces its runs leave for their twins.
// The tiny model, on CPU or on the device APRIL_LIVE_DEVICE names.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <set>
#include <tuple>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/decode_graph.hpp"
#include "adapters/live/detail/device.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "adapters/live/live_backend.hpp"
#include "adapters/live/profiler.hpp"
#include "base/atomic_file.hpp"
#include "base/hash.hpp"
#include "policies/april_policy.hpp"
#include "rl/rl_loop.hpp"
#include "scenario/simulation.hpp"
#include "studies/live_validation.hpp"
#include "studies/machine_drift.hpp"
#include "tasks/countdown_task.hpp"
#include "test_support.hpp"
#include "traces/trace_workload.hpp"

#include "live_support.hpp"

namespace april::live {
namespace {

using namespace april::live::testing;

// A policy's train log over a few live steps on the tiny model: every step
// computed (taken after each step), the batches handed over, and what a
// second take right after the last one held. `before_step` runs before each.
struct TrainLogRun {
  std::vector<LiveTrainStep> log;
  std::int64_t batches = 0;
  std::size_t taken_twice = 0;
};
TrainLogRun run_train_log(const std::string& name, int steps, const std::function<void()>& before_step = {}) {
  april::testing::Fixture f("handcheck", {name == "sync" ? "cluster.mode=colocated" : "cluster.mode=disaggregated", "cluster.gpus=2",
                                          "rollout_batch_size=2", "n_samples_per_prompt=2", "max_response_len=16"});
  auto policy = f.registry.get(name).make(f.config);
  const CountdownTask task({4, 0.6, 10}, 7);
  LiveOptions o = tiny_live();
  o.record_iterations = true;
  LiveBackend live(o, task);
  CountdownWorkload workload(task, 2);
  rl::RlLoop loop(live, *policy, workload, {2, 16, false});
  TrainLogRun run;
  loop.on_batch = [&](std::int64_t, const auto&) { ++run.batches; };
  for (int s = 0; s < steps; ++s) {
    if (before_step) before_step();
    loop.run_step();
    for (const auto& t : live.take_train_log()) run.log.push_back(t);
  }
  live.wait_for_trainer();
  run.taken_twice = live.take_train_log().size();
  return run;
}

// validate compares each live train step with the twin's model of it: the
// log must hold every step computed, once, with its batch's shape and the
// engine's time beside it (none where the loop trains alone).
TEST(LiveBackend, TheTrainLogHoldsEveryComputedStepWithItsShapeAndTheEnginesTimeBesideIt) {
  for (const std::string name : {"sync", "one_step_off"}) {
    const bool overlapped = name == "one_step_off";
    const auto [log, batches, taken_twice] = run_train_log(name, 4);
    // Every batch handed over is a train step; the last overlapped one may
    // still be reported by the next step's events, so at most one is missing.
    EXPECT_LE(static_cast<std::int64_t>(log.size()), batches) << name;
    EXPECT_GE(static_cast<std::int64_t>(log.size()), overlapped ? batches - 1 : batches) << name;
    EXPECT_GE(log.size(), 3U) << name;
    for (const auto& t : log) {
      EXPECT_EQ(t.point.samples, 4) << name;
      EXPECT_GT(t.point.time_s, 0) << name;
      EXPECT_LE(t.point.tokens, t.point.samples * t.point.longest_tok) << name;
      EXPECT_GT(t.point.longest_tok, 0) << name;
      EXPECT_GE(t.beside_engine_s, 0) << name;
      EXPECT_LE(t.beside_engine_s, t.point.time_s) << name;
      if (!overlapped) {
        EXPECT_EQ(t.beside_engine_s, 0) << name;
      }
    }
    EXPECT_EQ(taken_twice, 0U) << name << ": taken twice";
  }
}

// A train step that grows the heap is slow for a reason its shape does not
// give (each new page is faulted in), so validate's train log counts each
// step's page faults: those of the trainer's thread, where the step runs,
// not of the thread that waits for it. The free heap is handed back before
// every step, so every step must fault pages in again.
// The engine track of a live run's timeline: every change of the engine's
// running and queued requests and resident KV tokens, in time order, within
// its slots, ending empty after APRIL's abort at each step's end.
TEST(LiveBackend, TheEngineOccupancyIsRecordedAtEveryChange) {
  april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "max_response_len=16"});
  auto policy = f.registry.get("april").make(f.config);
  const CountdownTask task({4, 0.6, 10}, 7);
  LiveOptions o = tiny_live();
  o.record_engine_changes = true;
  LiveBackend live(o, task);
  CountdownWorkload workload(task, 2);
  rl::RlLoop loop(live, *policy, workload, {2, 16, false});
  std::vector<rl::EngineRunningChange> changes;
  for (int s = 0; s < 3; ++s) {
    loop.run_step();
    for (const auto& c : live.take_engine_changes()) changes.push_back(c);
  }
  ASSERT_GE(changes.size(), 6u);
  std::int64_t most_running = 0;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (i > 0) {
      EXPECT_GE(c.time_ns, changes[i - 1].time_ns);
      EXPECT_FALSE(c.running == changes[i - 1].running && c.waiting == changes[i - 1].waiting && c.kv_tok == changes[i - 1].kv_tok);
    }
    EXPECT_LE(c.running, o.slots);
    EXPECT_GE(c.waiting, 0);
    EXPECT_EQ(c.running == 0, c.kv_tok == 0) << "change " << i;
    most_running = std::max(most_running, c.running);
  }
  EXPECT_GT(most_running, 0);
  EXPECT_EQ(changes.back().running, 0);  // APRIL aborts what is left at each step's end
  EXPECT_EQ(changes.back().waiting, 0);
  EXPECT_TRUE(live.take_engine_changes().empty());
}

// The engine's windows: each iteration that ran something, in time order
// and apart, within the slots; the iterations that decoded are the engine's
// count, and each prefill names what it admitted.
TEST(LiveBackend, EachEngineIterationIsAWindow) {
  april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "max_response_len=16"});
  auto policy = f.registry.get("sync").make(f.config);
  const CountdownTask task({4, 0.6, 10}, 7);
  LiveOptions o = tiny_live();
  o.record_engine_windows = true;
  LiveBackend live(o, task);
  CountdownWorkload workload(task, 2);
  rl::RlLoop loop(live, *policy, workload, {2, 16, false});
  loop.run_step();
  loop.run_step();
  const auto windows = live.take_engine_windows();
  ASSERT_FALSE(windows.empty());
  std::int64_t prefill_requests = 0, decoding = 0;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const auto& w = windows[i];
    EXPECT_LE(w.start_ns, w.end_ns) << i;
    if (i > 0) {
      EXPECT_GE(w.start_ns, windows[i - 1].end_ns) << i;
    }
    EXPECT_EQ(w.iterations, 1);
    EXPECT_LE(w.batch, o.slots);
    EXPECT_EQ(w.prefill_tok > 0, w.prefill_requests > 0) << i;
    prefill_requests += w.prefill_requests;
    if (w.batch > w.prefill_requests) ++decoding;
  }
  EXPECT_EQ(prefill_requests, 2 * 2 * 2);  // sync: every sample of both steps admitted once
  EXPECT_EQ(windows.front().prefill_requests, 4);
  EXPECT_EQ(decoding, live.stats().iterations);
  EXPECT_TRUE(live.take_engine_windows().empty());
  EXPECT_TRUE(live.take_engine_changes().empty());  // not asked for
}

TEST(LiveBackend, TheTrainLogCountsEachStepsPageFaultsOnTheTrainersThread) {
  if (test_device().is_cuda()) GTEST_SKIP() << "host page faults: a CPU test";
  for (const std::string name : {"sync", "one_step_off"}) {
    const auto run = run_train_log(name, 4, [] { malloc_trim(0); });
    ASSERT_GE(run.log.size(), 3U) << name;
    for (const auto& t : run.log) EXPECT_GT(t.minor_faults, 0) << name;
  }
}

// validate grows the heap with one scratch train step before the live runs:
// it must leave the run exactly as it would have been (weights, optimizer,
// torch's global generator, the train log).
TEST(LiveBackend, GrowingTheHeapForTrainLeavesTheRunAsItWas) {
  april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "max_response_len=16"});
  const CountdownTask task({4, 0.6, 10}, 7);
  const auto run = [&](bool grow) {
    auto policy = f.registry.get("sync").make(f.config);
    LiveOptions o = tiny_live();
    o.record_iterations = true;
    LiveBackend live(o, task);
    torch::manual_seed(11);
    if (grow) live.grow_heap_for_train(8);
    const double drawn = torch::rand({1}).item<double>();
    EXPECT_TRUE(live.take_train_log().empty());
    CountdownWorkload workload(task, 2);
    rl::RlLoop loop(live, *policy, workload, {2, 16, false});
    std::vector<double> out{drawn};
    for (int s = 0; s < 3; ++s) {
      const auto m = loop.run_step();
      out.push_back(m.reward_mean.value_or(-1.0));
      out.push_back(static_cast<double>(m.tokens_generated));
      out.push_back(static_cast<double>(live.take_train_log().size()));
    }
    out.push_back(live.evaluate(4));
    return out;
  };
  EXPECT_EQ(run(true), run(false));
}

TEST(LiveBackend, CheckpointResumeContinuesExactly) {
  const CountdownTask task({4, 0.6, 10}, 9);
  april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "april.alpha=2"});
  auto policy = f.registry.get("april").make(f.config);
  const auto dir = (std::filesystem::temp_directory_path() / "april_live_checkpoint").string();
  base::remove_tree(dir);
  std::vector<rl::StepMetrics> straight;
  {
    LiveBackend b(tiny_live(), task);
    CountdownWorkload w(task, 2);
    rl::RlLoop loop(b, *policy, w, {2, 16, false});
    for (int s = 0; s < 4; ++s) straight.push_back(loop.run_step());
  }
  nlohmann::json state;
  std::int64_t next = 0;
  {
    LiveBackend b(tiny_live(), task);
    CountdownWorkload w(task, 2);
    rl::RlLoop loop(b, *policy, w, {2, 16, false});
    for (int s = 0; s < 2; ++s) loop.run_step();
    b.save(dir);
    state = loop.save_state();
    next = w.next_index();
  }
  LiveBackend b(tiny_live(), task);
  b.load(dir);
  CountdownWorkload w(task, 2, next);
  rl::RlLoop loop(b, *policy, w, {2, 16, false});
  loop.load_state(state);
  for (int s = 2; s < 4; ++s) {
    const auto m = loop.run_step();
    EXPECT_EQ(m.step, s);
    EXPECT_EQ(m.tokens_generated, straight[static_cast<std::size_t>(s)].tokens_generated) << "step " << s;
    EXPECT_EQ(m.reward_mean, straight[static_cast<std::size_t>(s)].reward_mean) << "step " << s;
    EXPECT_EQ(m.tokens_offpolicy, straight[static_cast<std::size_t>(s)].tokens_offpolicy) << "step " << s;
  }
  base::remove_tree(dir);
}

// An overlapped run checkpointed between steps, with samples in flight and a
// train step just started: resumed in a new backend and loop, it continues
// exactly as the same run suspended and continued in place (the suspend
// sends in-flight samples back to re-prefill; lockstep makes timing moot).
TEST(LiveBackend, AnOverlappedRunResumesFromACheckpointAsIfSuspendedInPlace) {
  const CountdownTask task({4, 0.6, 10}, 9);
  april::testing::Fixture f("handcheck", {"cluster.mode=disaggregated", "cluster.gpus=2", "rollout_batch_size=2", "n_samples_per_prompt=2",
                                          "max_response_len=16", "async.eta=2"});
  LiveOptions o = tiny_live();
  o.train_lockstep_iterations = 3;
  const auto dir = (std::filesystem::temp_directory_path() / "april_live_overlap_checkpoint").string();
  base::remove_tree(dir);
  auto policy = f.registry.get("async").make(f.config);  // stateless: one object serves every run
  // Suspend after the first step that ends with a train step started.
  int k = 0;
  std::vector<rl::StepMetrics> in_place;
  std::int64_t held_at_suspend = 0, total_in_place = 0;
  {
    LiveBackend b(o, task);
    CountdownWorkload w(task, 2);
    rl::RlLoop loop(b, *policy, w, {2, 16, false});
    do {
      loop.run_step();
      ++k;
    } while (loop.trainer_idle() && k < 8);
    ASSERT_FALSE(loop.trainer_idle()) << "no step ended with a train step started";
    loop.suspend();
    held_at_suspend = loop.buffered_tok();
    for (int s = 0; s < 3; ++s) in_place.push_back(loop.run_step());
    total_in_place = loop.total_generated_tok();
  }
  nlohmann::json state;
  std::int64_t next = 0;
  {
    LiveBackend b(o, task);
    CountdownWorkload w(task, 2);
    rl::RlLoop loop(b, *policy, w, {2, 16, false});
    for (int s = 0; s < k; ++s) loop.run_step();
    EXPECT_THROW(b.save(dir), std::logic_error);  // samples in flight: suspend first
    EXPECT_THROW((void)loop.save_state(), std::logic_error);
    loop.suspend();
    b.save(dir);
    state = loop.save_state();
    next = w.next_index();
  }
  EXPECT_GT(held_at_suspend, 0) << "nothing was in flight or queued: the test checks little";
  LiveBackend b(o, task);
  b.load(dir);
  CountdownWorkload w(task, 2, next);
  rl::RlLoop loop(b, *policy, w, {2, 16, false});
  loop.load_state(state);
  EXPECT_EQ(loop.buffered_tok(), held_at_suspend);
  EXPECT_FALSE(loop.trainer_idle());
  for (int s = 0; s < 3; ++s) {
    const auto m = loop.run_step();
    const auto& want = in_place[static_cast<std::size_t>(s)];
    EXPECT_EQ(m.step, k + s);
    EXPECT_EQ(m.tokens_generated, want.tokens_generated) << "step " << k + s;
    EXPECT_EQ(m.tokens_trained, want.tokens_trained) << "step " << k + s;
    EXPECT_EQ(m.tokens_offpolicy, want.tokens_offpolicy) << "step " << k + s;
    EXPECT_EQ(m.staleness_token_sum, want.staleness_token_sum) << "step " << k + s;
    EXPECT_EQ(m.reward_mean, want.reward_mean) << "step " << k + s;
  }
  EXPECT_EQ(loop.total_generated_tok(), total_in_place);
  // A colocated policy refuses an overlapped run's checkpoint, by name.
  auto april_policy = f.registry.get("april").make(f.config);
  rl::RlLoop colocated(b, *april_policy, w, {2, 16, false});
  EXPECT_THROW(colocated.load_state(state), std::invalid_argument);
  base::remove_tree(dir);
}

TEST(LiveTrace, TheTwinRunsEveryDrawnGroupTheWhatIfTraceOnlyCompleteOnes) {
  const std::map<std::int64_t, std::vector<std::int32_t>> lengths = {
      {0, {5, 7}},                           // trained
      {1, {4, studies::kUnfinishedSample}},  // buffered, one sample still running
  };                                         // group 2: drawn, never returned
  const auto twin = studies::live_trace(lengths, 3, 2, 48, studies::LiveTraceUse::kTwin);
  ASSERT_EQ(twin.size(), 3U);
  EXPECT_EQ(twin[0].response_tok, (std::vector<std::int32_t>{5, 7}));
  EXPECT_EQ(twin[1].response_tok, (std::vector<std::int32_t>{4, 48}));  // the finished one keeps its length
  EXPECT_EQ(twin[2].response_tok, (std::vector<std::int32_t>{48, 48}));
  EXPECT_EQ(twin[2].prompt_id, CountdownTask::prompt_id(2));
  const auto whatif = studies::live_trace(lengths, 3, 2, 48, studies::LiveTraceUse::kWhatIf);
  ASSERT_EQ(whatif.size(), 1U);
  EXPECT_EQ(whatif[0].prompt_id, CountdownTask::prompt_id(0));
  EXPECT_EQ(whatif[0].response_tok, (std::vector<std::int32_t>{5, 7}));
}

TEST(LiveTrace, ADatasetsPromptsComeBackInTheTwinWithEachDrawsOwnLengths) {
  // Two prompts, three draws: draw 2 is prompt 0 again, with its own lengths.
  const std::map<std::int64_t, std::vector<std::int32_t>> lengths = {{0, {5, 7}}, {1, {3, 3}}, {2, {6, 9}}};
  const auto twin = studies::live_trace(lengths, 3, 2, 48, studies::LiveTraceUse::kTwin, 2);
  ASSERT_EQ(twin.size(), 3U);
  EXPECT_EQ(twin[2].prompt_id, CountdownTask::prompt_id(0));
  EXPECT_EQ(twin[0].response_tok, (std::vector<std::int32_t>{5, 7}));
  EXPECT_EQ(twin[2].response_tok, (std::vector<std::int32_t>{6, 9}));
  // The live task draws the same prompts in the same order.
  const CountdownTask task({4, 0.6, 10, 2}, 7);
  CountdownWorkload w(task, 2);
  for (const auto& g : twin) EXPECT_EQ(w.next_group(0).prompt_id, g.prompt_id);
}

}  // namespace
}  // namespace april::live
