// The live profiler and the CPU runtime it relies on.
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

// The profile times train steps on live batches (B x n answers at the task's
// own lengths), alone and beside the engine, so that the calibrated train
// model and its slowdown are fitted at the shape the twin predicts; eight
// side-by-side probes per pass.
TEST(LiveProfiler, TrainProbesIncludeLiveBatchesAtTheTasksLengths) {
  auto o = tiny_profile(8, 16, 12);
  o.task = {6, 0.7, 14};
  const auto prof = profile_live(o);
  const auto live_shaped =
      std::count_if(prof.train.begin(), prof.train.end(), [](const studies::TrainPoint& t) { return t.samples == 12; });
  EXPECT_EQ(live_shaped, 3);
  ASSERT_EQ(prof.train_beside_engines.size(), 8U);
  ASSERT_EQ(prof.train_alone_paired.size(), 8U);
  for (const auto& t : prof.train_beside_engines) {
    EXPECT_EQ(t.samples, 12);
    // Countdown answers (N + 1 tokens, N lognormal around 6) are shorter than
    // the cap: the batch is not the padded worst case.
    EXPECT_LT(t.longest_tok, 3 + 16);
    EXPECT_GT(t.tokens, 12 * (3 + 1));
  }
  // Fresh draws each probe: the contention batches differ.
  EXPECT_NE(prof.train_beside_engines[0].tokens, prof.train_beside_engines[1].tokens);
  // Each side-by-side probe times the step's handoff both ways (the twin's train.handoff_s).
  ASSERT_EQ(prof.train_start_latency_s.size(), 8U);
  ASSERT_EQ(prof.train_end_latency_s.size(), 8U);
  for (const auto* v : {&prof.train_start_latency_s, &prof.train_end_latency_s}) {
    for (double s : *v) {
      EXPECT_GE(s, 0.0);
      EXPECT_LT(s, 5.0);
    }
  }
}

// Given the live runs' batches (april validate hands over each round's), the
// probes on a live batch take their lengths, in turn, instead of the task's:
// the twin predicts steps at the policy model's answers. An empty batch is
// skipped, and the samples are the batch's own count (lengths beyond the cap
// are held to it, as a live answer is).
TEST(LiveProfiler, LiveBatchProbesTakeTheLiveRunsBatchesInTurn) {
  LiveProfiler profiler(tiny_profile(8, 16, 12));
  const std::vector<std::int32_t> even(12, 2);  // 12 x (3 + 2) tokens, longest 5
  std::vector<std::int32_t> spread;
  for (std::int32_t k = 1; k <= 10; ++k) spread.push_back(2 * k);  // 10 samples, 18 and 20 held to 16: longest 19
  profiler.use_live_batches({even, {}, spread});
  profiler.run(profiler.probes_per_pass());
  const auto prof = profiler.profile();
  const auto is_even = [](const studies::TrainPoint& t) { return t.samples == 12 && t.tokens == 60 && t.longest_tok == 5; };
  const auto is_spread = [](const studies::TrainPoint& t) {
    return t.samples == 10 && t.tokens == 10 * 3 + (2 + 4 + 6 + 8 + 10 + 12 + 14 + 16 + 16 + 16) && t.longest_tok == 19;
  };
  const auto count = [](const std::vector<studies::TrainPoint>& v, const auto& pred) { return std::count_if(v.begin(), v.end(), pred); };
  // Three live-batch train probes and eight side-by-side ones per pass, every one a given batch, alternating.
  EXPECT_EQ(count(prof.train, is_even) + count(prof.train, is_spread), 3);
  ASSERT_EQ(prof.train_beside_engines.size(), 8U);
  ASSERT_EQ(prof.train_alone_paired.size(), 8U);
  EXPECT_EQ(count(prof.train_beside_engines, is_even) + count(prof.train_beside_engines, is_spread), 8);
  EXPECT_GE(count(prof.train_beside_engines, is_even), 2);
  EXPECT_GE(count(prof.train_beside_engines, is_spread), 2);
  for (std::size_t i = 0; i < prof.train_beside_engines.size(); ++i) {
    EXPECT_EQ(prof.train_alone_paired[i].tokens, prof.train_beside_engines[i].tokens);  // each pair on one batch
  }
  // The probe grid's other train steps keep their shapes: none of them is 12 or 10 samples.
  EXPECT_EQ(count(prof.train, [](const studies::TrainPoint& t) { return t.samples == 12 || t.samples == 10; }), 3);
}

// Each run() is one slice of the profile, and the profile says where each
// ended: `april validate` reads the machine's speed between its live steps
// from them (studies::slice_slowdowns).
TEST(LiveProfiler, EachRunIsASliceOfTheProfile) {
  LiveProfiler profiler(tiny_profile(8, 16, 12));
  profiler.run(3);
  profiler.run(profiler.probes_per_pass() - 3);
  profiler.run(5);
  const auto prof = profiler.profile();
  ASSERT_EQ(prof.slices.size(), 3U);
  EXPECT_EQ(prof.slices.back().iterations_end, static_cast<std::int64_t>(prof.iterations.size()));
  EXPECT_EQ(prof.slices.back().train_end, static_cast<std::int64_t>(prof.train.size()));
  // The first probes of a pass are iterations: the first slice measured some, and every slice ends after the one before.
  EXPECT_GT(prof.slices[0].iterations_end, 0);
  for (std::size_t k = 1; k < prof.slices.size(); ++k) {
    EXPECT_GE(prof.slices[k].iterations_end, prof.slices[k - 1].iterations_end);
    EXPECT_GE(prof.slices[k].train_end, prof.slices[k - 1].train_end);
  }
  // The second pass's first probes repeat the first's shapes: the last slice's speed can be told.
  const auto slow = studies::slice_slowdowns(prof);
  ASSERT_EQ(slow.size(), 3U);
  ASSERT_TRUE(slow[2].has_value());
  EXPECT_GT(*slow[2], 0.0);
}

// Every iteration the profile keeps has a shape of the probe grid: the engine
// work between probes (the side-by-side probes, spread among the iteration
// probes, and the rollout wave before each timed train step) leaves no request
// behind for the iteration probes after it, whose shapes the calibration takes
// as set. (Without the side-by-side probe's final abort, its last wave ran on
// into the next iteration probes.)
TEST(LiveProfiler, EngineWorkBetweenProbesLeavesTheIterationShapesAsSet) {
  const auto prof = profile_live(tiny_profile(8, 16, 12));
  const std::set<double> decoders = {0, 1, 4, 7};  // 0, 1, slots/8, slots/2, slots - slots/8
  const std::set<double> admitted = {1, 4, 7, 8};  // 1, slots/8, slots/2, slots; and the decoders' own start
  ASSERT_FALSE(prof.iterations.empty());
  for (const auto& it : prof.iterations) {
    EXPECT_TRUE(decoders.count(it.decode_batch()) == 1) << "decoding " << it.decode_batch();
    EXPECT_TRUE(it.prefill_requests == 0 || admitted.count(it.prefill_requests) == 1) << "admitted " << it.prefill_requests;
    EXPECT_LE(it.batch, 8);
  }
}

// No train probe is larger than a live batch: no live step has such a shape,
// and the one at 2x the batch grew the heap past the trim threshold, so the
// live steps after it faulted their pages in again (profiler.cpp).
TEST(LiveProfiler, TrainProbesStopAtTheLiveBatch) {
  const auto prof = profile_live(tiny_profile(16, 8, 8));
  ASSERT_FALSE(prof.train.empty());
  for (const auto& t : prof.train) EXPECT_LE(t.samples, 8);
  for (const auto& t : prof.train_beside_engines) EXPECT_LE(t.samples, 8);
}

// An overlapped run trains on a thread of its own. Its steps must reuse the
// memory the previous step freed, as a step on the main thread does: with
// glibc's default arena per thread, the thread's heaps were unmapped when they
// emptied and each step faulted its tensors' pages in afresh (16,600 minor
// faults per step against 280, 1.5x the step time; bench/
// live_trainer_thread_bench.cpp). Counted, not timed: faults are not noise.

TEST(CpuRuntime, ATrainStepOnItsOwnThreadReusesFreedMemory) {
  if (test_device().is_cuda()) GTEST_SKIP() << "host page faults: a CPU test";
  configure_runtime(1);
  torch::manual_seed(3);
  const CountdownTask task(CountdownParams{}, 1);
  GrpoTrainer trainer(Transformer(model_config("small", task.vocab(), task.max_prompt_tok() + 32)), std::nullopt, GrpoOptions{},
                      torch::Device(torch::kCPU));
  std::vector<TrainSampleData> batch;
  for (int i = 0; i < 32; ++i) {
    batch.push_back(filler_sample({CountdownTask::kBos, CountdownTask::kOne, CountdownTask::kSep}, CountdownTask::kOne,
                                  static_cast<std::size_t>(8 + i % 16), i % 2, i / 4));
  }
  const auto step_on_own_thread = [&] {
    return std::async(std::launch::async,
                      [&] {
                        torch::set_num_threads(1);
                        const auto before = thread_minor_faults();
                        trainer.step(batch, 0);
                        return thread_minor_faults() - before;
                      })
        .get();
  };
  trainer.step(batch, 0);  // the shape's memory, once, on this thread
  const auto first = step_on_own_thread();
  const auto second = step_on_own_thread();
  // Measured on the 2-core machine: 1 to 1,700 faults with one arena (the
  // new thread's own stack and torch's per-thread state, which vary with the
  // heap's layout from one test binary to the next), 16,600 to 63,622 with an
  // arena per thread.
  EXPECT_LT(second, 5000) << "first step on a thread: " << first << " faults";
}

}  // namespace
}  // namespace april::live
