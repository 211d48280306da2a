#pragma once
// `april profile`: measures the live engine and trainer for calibration.
// Plain C++ header; the measurements use the same engine, model and trainer
// classes as `april live`.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "adapters/live/live_options.hpp"
#include "rl/backend_profile.hpp"
#include "tasks/countdown_task.hpp"

namespace april::live {

struct ProfileOptions {
  std::string model_size = "small";
  std::string device = "cpu";
  std::int64_t slots = 64;
  std::int64_t threads = 1;
  std::int32_t max_response_len = 48;
  ServingOptions serving;          // as the live run's engine
  std::int64_t repeats = 3;        // passes over the grid
  std::int64_t batch_samples = 0;  // samples a live train batch has (B x n); 0: slots
  std::uint64_t seed = 1;
  CountdownParams task;
  // The side-by-side probe as an arm of `april validate` meets its overlapped
  // steps: after another policy's arm has had its turn (a second engine and
  // trainer run a rollout wave and a train step), and after the weight copy
  // that starts an overlapped step. validate runs every policy's arm in turn,
  // one step each; the engine then starts beside its train step with its own
  // and its trainer's memory gone cold, and was slowed more than the probe
  // with both warm measured (bench/live_engine_beside_train_bench.cpp).
  bool contention_after_other_arm = false;
};

// The probes, in a fixed order: engine iterations in the shapes a rollout
// produces (requests decoding while others are admitted with contexts of one
// length or spread up to the longest a resumed sample has, and decode-only
// iterations between them, from the engine's own per-iteration log), train
// steps over batch sizes and response lengths, a weight copy, and aborts of
// 1 to `slots` running requests. run()
// executes the next ones, cycling, so a profile can be taken all at once or
// in slices between other work (april validate interleaves it with the live
// steps, so that both see the same machine conditions).
class LiveProfiler {
 public:
  explicit LiveProfiler(const ProfileOptions& options);
  ~LiveProfiler();
  LiveProfiler(const LiveProfiler&) = delete;
  LiveProfiler& operator=(const LiveProfiler&) = delete;

  [[nodiscard]] std::int64_t probes_per_pass() const;
  // The live batches the probes on a live batch take their response lengths
  // from (tokens per sample, one vector per batch), in turn, in place of
  // fresh draws of the task's answer lengths; replaces the ones given
  // before, and none (the default) is fresh draws. `april validate` hands
  // over each round's trained batches, one per policy. A live batch is the
  // policy model's answers, not the task's: in two 24-step narrow-tail runs
  // the trained batches' longest sample was 9-31 tokens (median 18), the
  // draws' 19-28, and the train model fitted at the draws read sync's and
  // april's steps 2-7% low (2026-11-24, 2-core machine).
  void use_live_batches(std::vector<std::vector<std::int32_t>> response_tok);
  // The next `probes` probes: one slice of the profile (Profile::slices).
  // `after_each` (if set) hears how many of them are done, for a progress line.
  void run(std::int64_t probes, const std::function<void(std::int64_t done)>& after_each = {});
  // Everything measured so far.
  [[nodiscard]] rl::Profile profile();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `repeats` whole passes; `progress` (if set) hears the probes done of the total.
rl::Profile profile_live(const ProfileOptions& options, const std::function<void(std::int64_t done, std::int64_t total)>& progress = {});

}  // namespace april::live
