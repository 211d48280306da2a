#pragma once
// The live execution backend: a real transformer, a continuous-batching KV
// engine and a GRPO trainer on a task (the built-in countdown, or math prompts
// for a Hugging Face checkpoint: live_task.hpp), behind the same Backend
// interface as the simulator. Plain C++ header: torch stays in the .cpp files.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "adapters/live/live_options.hpp"
#include "rl/backend.hpp"
#include "rl/backend_profile.hpp"
#include "rl/run_timeline.hpp"
#include "tasks/countdown_task.hpp"
#include "tasks/live_task.hpp"

namespace april::live {

struct LiveStats {
  std::string device;
  std::int64_t parameters = 0;
  std::int64_t iterations = 0, decoded_tok = 0, prefill_tok = 0;
  double engine_busy_s = 0;
  double last_train_loss = 0;
};

// One train step as it ran live: its batch's shape and compute time (from
// its first line to its last, on whichever thread ran it), and how long the
// engine iterated meanwhile (0 for a step the loop ran alone).
struct LiveTrainStep {
  rl::TrainPoint point;
  double beside_engine_s = 0;
  std::int64_t minor_faults = 0;  // page faults of the trainer's thread during the step (thread_minor_faults)
};

class LiveBackend final : public rl::Backend, public rl::OverlappingBackend {
 public:
  // The task must outlive the backend. With options.hf_checkpoint the model
  // is that checkpoint's (its vocabulary must hold the task's tokens); else
  // april's own of options.model_size, randomly initialised.
  LiveBackend(const LiveOptions& options, const LiveTask& task);
  ~LiveBackend() override;
  LiveBackend(const LiveBackend&) = delete;
  LiveBackend& operator=(const LiveBackend&) = delete;

  [[nodiscard]] double now_s() const override;
  [[nodiscard]] std::int64_t engines() const override { return 1; }
  [[nodiscard]] std::int64_t max_running_per_engine() const override;
  void submit(const rl::SampleRequest& request) override;
  std::vector<rl::SampleProgress> wait_for_completions() override;
  std::vector<rl::SampleProgress> abort_all() override;
  rl::TrainReport train(const std::vector<rl::TrainSample>& batch, std::int64_t version) override;
  void sync_weights(std::int64_t new_version) override;
  [[nodiscard]] rl::BackendCounters counters() const override;
  // A request that ends without an end token reached max_new (a chunk's end
  // or the length cap). A chunk goes on re-prefilled: this engine keeps no KV
  // between requests (SampleRequest::cached_tok is not honoured).
  [[nodiscard]] bool reports_chunk_ends() const override { return true; }

  // Overlapped operation (docs/design.md 3b): the trainer runs a step on its own
  // thread and its own copy of the weights while the engine generates on the
  // caller's; a sync copies the trainer's weights into the engine at an
  // iteration boundary.
  [[nodiscard]] rl::OverlappingBackend* overlapping() override { return this; }
  void start_train(const std::vector<rl::TrainSample>& batch, std::int64_t version, std::int64_t local_steps) override;
  void start_sync(std::int64_t new_version, bool recompute) override;
  rl::BackendEvents wait_for_events() override;
  // Stops the clock until the next wait_for_events (a train step started by
  // the last decisions computes only from then on), so that runs taking turns
  // on one machine each time only their own work: april validate interleaves
  // policies step by step.
  void pause_clock();
  void resume_clock();
  // Starts a train step started by start_train and blocks until it has
  // computed; its end is still reported by wait_for_events.
  void wait_for_trainer();

  // Supervised warm start on the task (the "pretrained" starting point RL
  // post-trains); a ConfigError for live.sft_steps > 0 on a task without answers.
  double warm_start(const std::function<void(std::int64_t step, double loss)>& progress = {});
  // One untimed train step of `samples` answers at live.max_response_len, on
  // a scratch trainer of the same model and options on the trainer's thread,
  // so the heap is grown before any live step (validate asks for twice a
  // live batch, B x n: see validation.cpp). The step whose batch is the
  // largest so far otherwise pays for growing it (1.2-1.9x its time,
  // faulting the new pages in), and in one process whichever run meets that
  // shape first pays for the others (validate). Nothing of this backend's
  // weights, optimizer or logs changes.
  void grow_heap_for_train(std::int64_t samples);
  // Greedy accuracy on the task's first `prompts` held-out prompts (the
  // fraction whose reward reaches the task's correct_reward).
  double evaluate(std::int64_t prompts);
  [[nodiscard]] LiveStats stats() const;
  // The engine iterations since the last call, when LiveOptions::record_iterations.
  std::vector<rl::IterationPoint> take_iteration_log();
  // The engine's running and queued requests and resident KV tokens at each
  // change since the last call, on now_s()'s clock, when
  // LiveOptions::record_engine_changes (the engine tracks of a timeline).
  std::vector<rl::EngineRunningChange> take_engine_changes();
  // Each engine iteration since the last call as a window (its start and end
  // on now_s()'s clock, batch, KV tokens, prefill), when
  // LiveOptions::record_engine_windows.
  std::vector<rl::EngineWindowSpan> take_engine_windows();
  // The train steps computed since the last call, when LiveOptions::record_iterations.
  std::vector<LiveTrainStep> take_train_log();
  // The tokens of a sample held by the backend (for tests and traces).
  [[nodiscard]] std::vector<std::int32_t> sample_tokens(rl::SampleKey key) const;

  // Model, optimizer, the tokens of samples held (buffered, queued or
  // suspended), the engine's version and a train step started but not yet
  // computing (its batch). Between steps only: nothing in flight (an
  // overlapped loop suspend()s first) and no train step computing.
  void save(const std::string& dir) const;
  void load(const std::string& dir);
  // The trained policy as a Hugging Face checkpoint in the folder `dir`
  // (which the caller made, empty): the weights in the source checkpoint's
  // dtype, its config and tokenizer files copied, so that an inference
  // server loads it. A train step computing is waited for. Only for a
  // backend built on options.hf_checkpoint (std::logic_error otherwise).
  void save_hf(const std::string& dir);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "cpu" always; "cuda" where this libtorch build and the machine have it.
bool device_available(const std::string& device);

}  // namespace april::live
