#pragma once
// The live backend's state (LiveBackend::Impl): its engine and trainer, the
// samples it holds and those in flight. Shared by live_backend.cpp (the
// backend's operations) and live_backend_checkpoint.cpp (save and load).
// Includes torch: a detail header.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <optional>
#include <unordered_map>
#include <utility>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/device.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "adapters/live/detail/hf_checkpoint.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "adapters/live/detail/worker_thread.hpp"
#include "adapters/live/live_backend.hpp"
#include "adapters/live/live_memory.hpp"
#include "base/config.hpp"
#include "base/hash.hpp"

namespace april::live {

// A sample's tokens and log-probs held between submissions (buffered or resumed).
struct Stored {
  std::string prompt_id;
  std::vector<std::int32_t> tokens;
  std::vector<float> logprobs;
};

// A sample submitted by the loop and not yet returned to it.
struct InFlight {
  std::int32_t max_new = 0;      // the loop's budget for this submission
  std::int32_t engine_base = 0;  // tokens of earlier engine requests in this submission (before a recompute)
  std::int32_t attributed = 0;   // tokens already given a version
  bool crossed_sync = false;     // a sync found it in flight: its tokens span versions
  base::TokensByVersion by_version;
};

struct LiveBackend::Impl {
  LiveOptions opt;
  const LiveTask& task;
  torch::Device device;
  ModelConfig config;
  std::unique_ptr<GrpoTrainer> trainer;
  std::unique_ptr<KvEngine> engine;
  std::unordered_map<rl::SampleKey, Stored> store;
  std::unordered_map<rl::SampleKey, InFlight> flight;
  std::int64_t engine_version = 0;        // the version of the engine's weights
  StDtype hf_file_dtype = StDtype::BF16;  // a Hugging Face checkpoint's weights on disk: save_hf writes them so
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> paused_at;
  double last_loss = 0;
  // Overlapped runs: a train step waiting to start, the one running, the
  // trainer's thread (made at the first overlapped step; declared after the
  // trainer so it is joined before the trainer goes), and a sync waiting to run.
  std::optional<std::pair<std::vector<TrainSampleData>, std::int64_t>> train_to_start;
  std::future<TrainStats> train_running;
  std::unique_ptr<WorkerThread> trainer_thread;
  std::optional<std::pair<std::int64_t, bool>> sync_to_run;  // (new version, recompute)
  std::int64_t lockstep_left = 0;                            // engine iterations the running train step still lasts (lockstep mode)
  // With record_iterations: the train steps computed, and the one started
  // (its shape, the engine's time beside it so far). train_compute_s and
  // train_minor_faults are written by the trainer's thread before its future
  // is ready and read only after get().
  std::vector<LiveTrainStep> train_log;
  LiveTrainStep train_record;
  // With record_engine_changes: the engine's occupancy at each change.
  std::vector<rl::EngineRunningChange> engine_changes;
  // With record_engine_windows: each iteration that ran something.
  std::vector<rl::EngineWindowSpan> engine_windows;
  double train_compute_s = 0;
  std::int64_t train_minor_faults = 0;

  Impl(const LiveOptions& o, const LiveTask& t) : opt(o), task(t), device(parse_device(o.device)) {
    configure_runtime(o.threads);
    torch::manual_seed(o.seed);
    const auto max_seq = t.max_prompt_tok() + o.max_response_len;
    Transformer policy{nullptr};
    if (o.hf_checkpoint.empty()) {
      config = model_config(o.model_size, t.vocab(), max_seq);
      policy = Transformer(config);
    } else {
      // The trainer's float32 master weights; the engine's copy below takes
      // the serving dtype at the first copy_weights.
      auto ck = load_hf_checkpoint(o.hf_checkpoint, max_seq, torch::kCPU, torch::kFloat32);
      config = ck.model->config();
      if (t.vocab() > config.vocab) {
        throw base::ConfigError(fmt::format("{}: the task's tokens go up to id {}, but the model's vocabulary (vocab_size) has {}",
                                            o.hf_checkpoint, t.vocab() - 1, config.vocab));
      }
      policy = ck.model;
      hf_file_dtype = ck.file_dtype;
    }
    Transformer serving(config);
    copy_weights(policy, serving);
    std::optional<Transformer> reference;
    if (o.kl_coef > 0) {
      reference = Transformer(config);
      copy_weights(policy, *reference);
    }
    trainer = std::make_unique<GrpoTrainer>(policy, reference, grpo_options(o), device);
    EngineOptions e;
    e.slots = o.slots, e.temperature = o.temperature, e.top_p = o.top_p, e.exact_prefill = o.exact_prefill;
    e.eos = t.end_tokens(), e.device = device, e.record_iterations = o.record_iterations;
    apply_serving(o.serving, e, serving);
    engine = std::make_unique<KvEngine>(serving, e);
  }

  // The engine's occupancy now, recorded (record_engine_changes) when it
  // differs from the last one recorded.
  void note_engine(double now_s) {
    if (!opt.record_engine_changes) return;
    rl::EngineRunningChange c;
    c.time_ns = std::llround(now_s * 1e9);
    c.running = static_cast<std::int64_t>(engine->running());
    c.waiting = static_cast<std::int64_t>(engine->waiting());
    c.kv_tok = engine->resident_tok();
    if (!engine_changes.empty()) {
      const auto& last = engine_changes.back();
      if (last.running == c.running && last.waiting == c.waiting && last.kv_tok == c.kv_tok) return;
    }
    engine_changes.push_back(c);
  }

  // One engine iteration, from `start_s` to `end_s` of the backend's clock,
  // then its occupancy: both recorded where asked for.
  std::vector<GenResult> step_engine(const std::function<double()>& now_s) {
    const double start_s = now_s();
    auto done = engine->step();
    const double end_s = now_s();
    const rl::IterationPoint& it = engine->last_iteration();
    if (opt.record_engine_windows && (it.batch > 0 || it.prefill_requests > 0)) {
      rl::EngineWindowSpan w;
      w.start_ns = std::llround(start_s * 1e9);
      w.end_ns = std::llround(end_s * 1e9);
      w.iterations = 1;
      w.batch = static_cast<std::int64_t>(it.batch);
      w.kv_tok = static_cast<std::int64_t>(it.kv_tok);
      w.prefill_tok = static_cast<std::int64_t>(it.prefill_tok);
      w.prefill_requests = static_cast<std::int64_t>(it.prefill_requests);
      engine_windows.push_back(w);
    }
    note_engine(end_s);
    return done;
  }

  void enqueue(rl::SampleKey key, std::int32_t max_new) {
    const auto& st = store.at(key);
    GenRequest g;
    g.key = key;
    g.context = task.prompt_tokens(st.prompt_id);
    g.context.insert(g.context.end(), st.tokens.begin(), st.tokens.end());
    g.generated_before = static_cast<std::int32_t>(st.tokens.size());
    g.max_new = max_new;
    g.seed = base::combine_seeds(opt.seed, key);
    engine->add(std::move(g));
  }

  // An engine result back to the loop: its tokens joined to the sample's,
  // the submission's progress with the versions that produced it.
  rl::SampleProgress deliver(GenResult& d, bool returns_to_loop, std::int64_t version) {
    auto& st = store.at(d.key);
    st.tokens.insert(st.tokens.end(), d.tokens.begin(), d.tokens.end());
    st.logprobs.insert(st.logprobs.end(), d.logprobs.begin(), d.logprobs.end());
    auto& f = flight.at(d.key);
    const auto total = f.engine_base + static_cast<std::int32_t>(d.tokens.size());
    rl::SampleProgress p{d.key, total, {}};
    p.stopped_at_max_new = d.finished && d.stop_token < 0;  // no end token: it reached max_new
    if (f.crossed_sync && total > f.attributed) {
      f.by_version.push_back({version, total - f.attributed});
      f.attributed = total;
    }
    if (returns_to_loop) {
      p.by_version = std::move(f.by_version);
      flight.erase(d.key);
    }
    return p;
  }

  // Tokens generated so far by in-flight samples were sampled by `old_version`.
  void attribute_in_flight(std::int64_t old_version) {
    for (const auto& [key, n] : engine->in_flight_progress()) {
      auto& f = flight.at(key);
      const auto total = f.engine_base + n;
      if (total > f.attributed) f.by_version.push_back({old_version, total - f.attributed});
      f.attributed = total;
      f.crossed_sync = true;
    }
  }

  // Every train step runs on this one thread, overlapped or not, and so do
  // the profiler's (LiveProfiler): the train model is fitted to steps on the
  // kind of thread that runs them live. A step on a thread other than the
  // one that ran the engine cost 1.02-1.04x the same step on it
  // (bench/results/live_trainer_thread_small.txt), which a fit to main-thread
  // steps put in no figure.
  WorkerThread& trainer_worker() {
    if (!trainer_thread) {
      // OpenMP's thread count is per thread: this one gets the same as the engine's.
      trainer_thread = std::make_unique<WorkerThread>([threads = opt.threads] { configure_thread(threads); });
    }
    return *trainer_thread;
  }

  void launch_train() {
    if (!train_to_start) return;
    auto job = std::move(*train_to_start);
    train_to_start.reset();
    lockstep_left = opt.train_lockstep_iterations;
    train_running = trainer_worker().run([this, data = std::move(job.first), version = job.second] {
      auto t = timed_step(data, version);
      train_compute_s = t.compute_s;
      train_minor_faults = t.minor_faults;
      return t.stats;
    });
  }

  // A batch whose responses ran long (an untrained policy need not stop)
  // may need more than the estimate made before the run: refused with its
  // numbers rather than left to the kernel's OOM killer.
  void check_batch_memory(const std::vector<TrainSampleData>& data) const {
    if (opt.memory_limit_bytes == 0 || device.is_cuda()) return;
    std::int64_t longest = 0;
    for (const auto& s : data) longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(s.prompt.size() + s.response.size()));
    LiveMemoryInputs in = memory_inputs(opt, config);
    in.train_samples = static_cast<std::int64_t>(data.size());
    in.train_tokens = longest;
    in.sft_batch = 0;
    const auto e = estimate_live_memory(in);
    if (e.total() > static_cast<double>(opt.memory_limit_bytes)) {
      check_live_memory(e, opt.memory_limit_bytes, fmt::format("a train step of {} samples up to {} tokens long", data.size(), longest));
    }
  }

  // One train step, its compute time from its first line to its last, and
  // the page faults it took (on the trainer's thread).
  struct TimedStep {
    TrainStats stats;
    double compute_s = 0;
    std::int64_t minor_faults = 0;
  };
  TimedStep timed_step(const std::vector<TrainSampleData>& data, std::int64_t version) {
    check_batch_memory(data);
    const auto faults_before = thread_minor_faults();
    const auto start = std::chrono::steady_clock::now();
    TimedStep t;
    t.stats = trainer->step(data, version);
    if (device.is_cuda()) torch::cuda::synchronize();
    t.compute_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    t.minor_faults = thread_minor_faults() - faults_before;
    return t;
  }

  // Training started (or waiting to start) is finished, so the trainer's weights can be read.
  void settle_trainer() {
    launch_train();
    if (train_running.valid()) wait_in_slices(train_running);
  }
};

}  // namespace april::live
