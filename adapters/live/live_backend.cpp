#include "adapters/live/live_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/live_memory.hpp"
#include "base/atomic_file.hpp"
#include "base/bounded_read.hpp"
#include "base/json_value.hpp"
#include "base/hash.hpp"
#include "adapters/live/detail/device.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "adapters/live/detail/worker_thread.hpp"

namespace april::live {
namespace {


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
  bool crossed_sync = false;      // a sync found it in flight: its tokens span versions
  base::TokensByVersion by_version;
};

// A batch's shape as the simulator's train model reads it.
rl::TrainPoint train_shape(const std::vector<rl::TrainSample>& batch) {
  const auto b = rl::train_batch_tokens(batch);
  rl::TrainPoint p;
  p.samples = static_cast<double>(b.samples);
  p.tokens = static_cast<double>(b.tokens);
  p.longest_tok = static_cast<double>(b.longest_tok);
  return p;
}

}  // namespace

bool device_available(const std::string& device) {
  if (device == "cpu") return true;
  if (device == "cuda") return torch::cuda::is_available();
  return false;
}

struct LiveBackend::Impl {
  LiveOptions opt;
  const CountdownTask& task;
  torch::Device device;
  ModelConfig config;
  std::unique_ptr<GrpoTrainer> trainer;
  std::unique_ptr<KvEngine> engine;
  std::unordered_map<rl::SampleKey, Stored> store;
  std::unordered_map<rl::SampleKey, InFlight> flight;
  std::int64_t engine_version = 0;  // the version of the engine's weights
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
  std::int64_t lockstep_left = 0;  // engine iterations the running train step still lasts (lockstep mode)
  // With record_iterations: the train steps computed, and the one started
  // (its shape, the engine's time beside it so far). train_compute_s and
  // train_minor_faults are written by the trainer's thread before its future
  // is ready and read only after get().
  std::vector<LiveTrainStep> train_log;
  LiveTrainStep train_record;
  double train_compute_s = 0;
  std::int64_t train_minor_faults = 0;

  Impl(const LiveOptions& o, const CountdownTask& t)
      : opt(o), task(t), device(parse_device(o.device)),
        config(model_config(o.model_size, t.vocab(), t.max_prompt_tok() + o.max_response_len)) {
    configure_runtime(o.threads);
    torch::manual_seed(o.seed);
    Transformer policy(config);
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
    e.eos = CountdownTask::kEos, e.device = device, e.record_iterations = o.record_iterations;
    apply_serving(o.serving, e, serving);
    engine = std::make_unique<KvEngine>(serving, e);
  }

  static GrpoOptions grpo_options(const LiveOptions& o) {
    GrpoOptions g;
    g.clip_low = o.clip_low, g.clip_high = o.clip_high, g.kl_coef = o.kl_coef, g.tis_cap = o.tis_cap;
    g.mask_staleness_above = o.mask_staleness_above, g.lr = o.lr, g.weight_decay = o.weight_decay, g.grad_clip = o.grad_clip;
    g.temperature = o.temperature;
    g.recompute_old_logprobs = o.recompute_old_logprobs, g.tis_stale_only = o.tis_stale_only;
    return g;
  }

  CountdownTask::Example example(const std::string& prompt_id) const { return task.example(CountdownTask::index_of(prompt_id)); }

  void enqueue(rl::SampleKey key, std::int32_t max_new) {
    const auto& st = store.at(key);
    GenRequest g;
    g.key = key;
    g.context = example(st.prompt_id).prompt;
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
      check_live_memory(e, opt.memory_limit_bytes,
                        fmt::format("a train step of {} samples up to {} tokens long", data.size(), longest));
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

LiveBackend::LiveBackend(const LiveOptions& options, const CountdownTask& task) : impl_(std::make_unique<Impl>(options, task)) {}
LiveBackend::~LiveBackend() = default;

double LiveBackend::now_s() const {
  const auto now = impl_->paused_at.value_or(std::chrono::steady_clock::now());
  return std::chrono::duration<double>(now - impl_->t0).count();
}

void LiveBackend::pause_clock() {
  if (!impl_->paused_at) impl_->paused_at = std::chrono::steady_clock::now();
}

void LiveBackend::resume_clock() {
  if (!impl_->paused_at) return;
  impl_->t0 += std::chrono::steady_clock::now() - *impl_->paused_at;
  impl_->paused_at.reset();
}

void LiveBackend::wait_for_trainer() { impl_->settle_trainer(); }

std::int64_t LiveBackend::max_running_per_engine() const { return impl_->opt.slots; }

void LiveBackend::submit(const rl::SampleRequest& r) {
  auto& st = impl_->store[r.key];
  if (r.generated_tok == 0) {  // fresh, or restarted from scratch
    st.tokens.clear();
    st.logprobs.clear();
  }
  st.prompt_id = r.prompt_id;
  if (static_cast<std::int32_t>(st.tokens.size()) != r.generated_tok) {
    throw std::logic_error(fmt::format("live backend: sample {} holds {} tokens, the loop says {}", r.key, st.tokens.size(), r.generated_tok));
  }
  if (!impl_->flight.emplace(r.key, InFlight{r.max_new_tok, 0, 0, false, {}}).second) {
    throw std::logic_error(fmt::format("live backend: sample {} submitted while in flight", r.key));
  }
  impl_->enqueue(r.key, r.max_new_tok);
}

std::vector<rl::SampleProgress> LiveBackend::wait_for_completions() {
  for (;;) {
    if (impl_->engine->running() == 0 && impl_->engine->waiting() == 0) {
      throw std::logic_error("wait_for_completions with nothing in flight");
    }
    auto done = impl_->engine->step();
    if (done.empty()) continue;
    std::vector<rl::SampleProgress> out;
    for (auto& d : done) out.push_back(impl_->deliver(d, true, impl_->engine_version));
    return out;
  }
}

std::vector<rl::SampleProgress> LiveBackend::abort_all() {
  std::vector<rl::SampleProgress> out;
  for (auto& d : impl_->engine->abort_all()) out.push_back(impl_->deliver(d, true, impl_->engine_version));
  return out;
}

namespace {

std::vector<TrainSampleData> train_data(const std::vector<rl::TrainSample>& batch,
                                        const std::unordered_map<rl::SampleKey, Stored>& store, const CountdownTask& task) {
  std::vector<TrainSampleData> data;
  for (const auto& s : batch) {
    const auto& st = store.at(s.key);
    TrainSampleData d;
    const auto ex = task.example(CountdownTask::index_of(st.prompt_id));
    d.prompt = ex.prompt;
    d.response = st.tokens;
    d.rollout_logprobs = st.logprobs;
    for (const auto& [v, n] : s.segments) d.token_version.insert(d.token_version.end(), static_cast<std::size_t>(n), v);
    if (d.token_version.size() != d.response.size()) {
      throw std::logic_error(fmt::format("live backend: sample {} has {} tokens but segments cover {}", s.key, d.response.size(),
                                         d.token_version.size()));
    }
    d.reward = CountdownTask::reward(ex, d.response);
    d.group = rl::key_group(s.key);
    data.push_back(std::move(d));
  }
  return data;
}

}  // namespace

rl::TrainReport LiveBackend::train(const std::vector<rl::TrainSample>& batch, std::int64_t version) {
  auto data = train_data(batch, impl_->store, impl_->task);
  // On the trainer's thread (Impl::trainer_worker), this one waiting for it.
  auto& im = *impl_;
  auto step = im.trainer_worker().run([&im, &data, version] { return im.timed_step(data, version); });
  wait_in_slices(step);
  const auto [st, compute_s, minor_faults] = step.get();  // rethrows the trainer's error
  if (im.opt.record_iterations) {
    LiveTrainStep rec{train_shape(batch), 0.0, minor_faults};
    rec.point.time_s = compute_s;
    im.train_log.push_back(rec);
  }
  for (const auto& s : batch) impl_->store.erase(s.key);
  impl_->last_loss = st.loss;
  return {st.reward_mean, st.accuracy, st.loss, std::nullopt};  // a live step has no modelled phases
}

void LiveBackend::start_train(const std::vector<rl::TrainSample>& batch, std::int64_t version) {
  if (impl_->train_to_start || impl_->train_running.valid() || impl_->sync_to_run) {
    throw std::logic_error("live backend: start_train while the trainer is busy");
  }
  // The batch's tokens are copied out now: the engine goes on while the trainer reads them.
  impl_->train_to_start.emplace(train_data(batch, impl_->store, impl_->task), version);
  impl_->train_record = LiveTrainStep{train_shape(batch), 0.0};
  for (const auto& s : batch) impl_->store.erase(s.key);
  // It goes to the trainer's thread at the next wait_for_events, which the loop calls right
  // after the instant's decisions: a caller that stops between steps (and
  // pauses the clock) does not have it computing meanwhile.
}

void LiveBackend::start_sync(std::int64_t new_version, bool recompute) {
  if (impl_->train_to_start || impl_->train_running.valid() || impl_->sync_to_run) {
    throw std::logic_error("live backend: start_sync while the trainer is busy");
  }
  impl_->sync_to_run.emplace(new_version, recompute);
}

rl::BackendEvents LiveBackend::wait_for_events() {
  auto& im = *impl_;
  resume_clock();
  rl::BackendEvents ev;
  if (im.sync_to_run) {
    // The engine is at an iteration boundary (it steps on this thread): it
    // waits for the copy, as DESIGN.md 3b's engines pause for a sync.
    const auto [version, recompute] = *im.sync_to_run;
    im.sync_to_run.reset();
    im.attribute_in_flight(version - 1);
    copy_weights(im.trainer->policy(), im.engine->model());
    if (im.device.is_cuda()) torch::cuda::synchronize();
    im.engine_version = version;
    if (recompute) {
      // AReaL's interruptible generation: each in-flight request drops its KV
      // and is admitted again with prompt + its tokens so far, in the order
      // it held; the re-prefill is counted as prefill, its draws continue at
      // the same token index.
      for (auto& d : im.engine->abort_all()) {
        const auto n = static_cast<std::int32_t>(d.tokens.size());
        im.deliver(d, false, version - 1);
        auto& f = im.flight.at(d.key);
        f.engine_base += n;
        im.enqueue(d.key, f.max_new - f.engine_base);
      }
    }
    ev.sync_ended = true;
    return ev;
  }
  im.launch_train();
  const bool lockstep = im.opt.train_lockstep_iterations > 0;
  const auto report_train = [&] {
    wait_in_slices(im.train_running);
    const TrainStats st = im.train_running.get();  // rethrows the trainer's error
    if (im.opt.record_iterations) {
      im.train_record.point.time_s = im.train_compute_s;
      im.train_record.minor_faults = im.train_minor_faults;
      // The iteration under way at the step's end counted whole.
      im.train_record.beside_engine_s = std::min(im.train_record.beside_engine_s, im.train_compute_s);
      im.train_log.push_back(im.train_record);
    }
    im.last_loss = st.loss;
    ev.train_ended = rl::TrainReport{st.reward_mean, st.accuracy, st.loss, std::nullopt};
  };
  // The train step's end, seen at an iteration boundary: when its thread is
  // done, or in lockstep mode once it has lasted its iterations.
  const auto train_done = [&] {
    if (!im.train_running.valid()) return false;
    if (lockstep ? im.lockstep_left > 0 : im.train_running.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    report_train();
    return true;
  };
  for (;;) {
    if (train_done()) return ev;
    if (im.engine->running() == 0 && im.engine->waiting() == 0) {
      if (!im.train_running.valid()) throw std::logic_error("wait_for_events with nothing in flight, training or syncing");
      // Nothing else can happen before the train step ends (in lockstep
      // mode its remaining iterations pass idle).
      report_train();
      return ev;
    }
    // Whether the trainer still computes (a lockstep step that has computed only waits).
    const bool beside = im.train_running.valid() && im.train_running.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
    im.engine->set_beside_train(beside);
    const auto iteration_start = std::chrono::steady_clock::now();
    for (auto& d : im.engine->step()) ev.finished.push_back(im.deliver(d, true, im.engine_version));
    if (beside) im.train_record.beside_engine_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - iteration_start).count();
    im.engine->set_beside_train(false);
    if (im.train_running.valid() && im.lockstep_left > 0) --im.lockstep_left;
    train_done();
    if (!ev.finished.empty() || ev.train_ended) return ev;
  }
}

void LiveBackend::sync_weights(std::int64_t new_version) {
  copy_weights(impl_->trainer->policy(), impl_->engine->model());
  if (impl_->device.is_cuda()) torch::cuda::synchronize();
  impl_->engine_version = new_version;
}

std::vector<rl::IterationPoint> LiveBackend::take_iteration_log() { return impl_->engine->take_iteration_log(); }

std::vector<LiveTrainStep> LiveBackend::take_train_log() { return std::exchange(impl_->train_log, {}); }

rl::BackendCounters LiveBackend::counters() const {
  const auto& s = impl_->engine->stats();
  rl::BackendCounters c;
  c.busy_engine_s = s.busy_s;
  c.running_slot_s = s.running_slot_s;
  c.prefill_tok = s.prefill_tok;
  return c;
}

void LiveBackend::grow_heap_for_train(std::int64_t samples) {
  auto& im = *impl_;
  std::vector<TrainSampleData> batch;
  for (std::int64_t i = 0; i < samples; ++i) {
    batch.push_back(filler_sample({CountdownTask::kBos, CountdownTask::kOne, CountdownTask::kSep}, CountdownTask::kOne,
                                  static_cast<std::size_t>(im.opt.max_response_len), static_cast<double>(i % 2), i / 8));
  }
  auto step = im.trainer_worker().run([&im, &batch] {
    // The scratch model's initial weights draw from torch's global generator:
    // its state is put back, so the live runs draw what they would have.
    auto generator = at::detail::getDefaultCPUGenerator();
    const auto state = generator.get_state();
    std::optional<Transformer> reference;
    if (im.opt.kl_coef > 0) reference = Transformer(im.config);
    GrpoTrainer scratch(Transformer(im.config), reference, Impl::grpo_options(im.opt), im.device);
    scratch.step(batch, 0);
    if (im.device.is_cuda()) torch::cuda::synchronize();
    generator.set_state(state);
  });
  wait_in_slices(step);
  step.get();
}

double LiveBackend::warm_start(const std::function<void(std::int64_t, double)>& progress) {
  double loss = 0;
  // Held-out indices: far from the RL prompts, which count up from 0.
  constexpr std::int64_t kSftBase = std::int64_t{1} << 40;
  for (std::int64_t step = 0; step < impl_->opt.sft_steps; ++step) {
    std::vector<std::pair<std::vector<std::int32_t>, std::vector<std::int32_t>>> batch;
    for (std::int64_t i = 0; i < impl_->opt.sft_batch; ++i) {
      auto ex = impl_->task.example(kSftBase + step * impl_->opt.sft_batch + i);
      batch.emplace_back(std::move(ex.prompt), std::move(ex.answer));
    }
    loss = impl_->trainer->sft_step(batch);
    if (progress) progress(step, loss);
  }
  copy_weights(impl_->trainer->policy(), impl_->engine->model());
  return loss;
}

double LiveBackend::evaluate(std::int64_t prompts) {
  // A train step computing now is waited for; one started but not yet
  // computing stays so: the weights evaluated are the last trained ones.
  if (impl_->train_running.valid()) impl_->train_running.wait();
  torch::NoGradGuard no_grad;
  EngineOptions e;
  e.slots = std::min<std::int64_t>(impl_->opt.slots, prompts);
  e.temperature = 0;
  e.exact_prefill = false;
  e.eos = CountdownTask::kEos;
  e.device = impl_->device;
  Transformer eval_model(impl_->config);
  copy_weights(impl_->trainer->policy(), eval_model);
  apply_serving(impl_->opt.serving, e, eval_model);
  KvEngine eng(eval_model, e);
  constexpr std::int64_t kEvalBase = std::int64_t{1} << 41;
  std::unordered_map<std::uint64_t, CountdownTask::Example> ex;
  for (std::int64_t i = 0; i < prompts; ++i) {
    ex[static_cast<std::uint64_t>(i)] = impl_->task.example(kEvalBase + i);
    eng.add({static_cast<std::uint64_t>(i), ex[static_cast<std::uint64_t>(i)].prompt, 0, impl_->opt.max_response_len, 0});
  }
  double correct = 0;
  std::int64_t finished = 0;
  while (finished < prompts) {
    for (const auto& d : eng.step()) {
      correct += CountdownTask::reward(ex.at(d.key), d.tokens);
      ++finished;
    }
  }
  return correct / static_cast<double>(prompts);
}

LiveStats LiveBackend::stats() const {
  LiveStats s;
  s.device = impl_->device.str();
  s.parameters = impl_->config.parameters();
  const auto& e = impl_->engine->stats();
  s.iterations = e.iterations;
  s.decoded_tok = e.decoded_tok;
  s.prefill_tok = e.prefill_tok;
  s.engine_busy_s = e.busy_s;
  s.last_train_loss = impl_->last_loss;
  return s;
}

std::vector<std::int32_t> LiveBackend::sample_tokens(rl::SampleKey key) const {
  auto it = impl_->store.find(key);
  return it == impl_->store.end() ? std::vector<std::int32_t>{} : it->second.tokens;
}

void LiveBackend::save(const std::string& dir) const {
  if (impl_->train_running.valid()) {
    throw std::logic_error("live backend: save while a train step computes; save between steps");
  }
  if (!impl_->flight.empty()) {
    throw std::logic_error(fmt::format("live backend: save with {} samples in flight (suspend the loop first)", impl_->flight.size()));
  }
  std::filesystem::create_directories(dir);
  torch::save(impl_->trainer->policy(), (std::filesystem::path(dir) / "model.pt").string());
  torch::save(impl_->trainer->optimizer(), (std::filesystem::path(dir) / "optimizer.pt").string());
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [key, st] : impl_->store) {
    j.push_back({{"key", key}, {"prompt_id", st.prompt_id}, {"tokens", st.tokens}, {"logprobs", st.logprobs}});
  }
  base::write_file_atomically((std::filesystem::path(dir) / "samples.json").string(), j.dump());
  // Overlapped runs: the engine's version, and a train step started but not
  // yet computing (its batch; the weights saved are those it starts from).
  nlohmann::json o;
  o["engine_version"] = impl_->engine_version;
  o["train_job"] = nullptr;
  if (impl_->train_to_start) {
    auto& job = o["train_job"];
    job["version"] = impl_->train_to_start->second;
    job["samples"] = nlohmann::json::array();
    for (const auto& d : impl_->train_to_start->first) {
      job["samples"].push_back({{"prompt", d.prompt}, {"response", d.response}, {"rollout_logprobs", d.rollout_logprobs},
                                {"token_version", d.token_version}, {"reward", d.reward}, {"group", d.group}});
    }
  }
  base::write_file_atomically((std::filesystem::path(dir) / "overlap.json").string(), o.dump());
}

void LiveBackend::load(const std::string& dir) {
  const auto p = std::filesystem::path(dir);
  for (const char* f : {"model.pt", "optimizer.pt", "samples.json"}) {
    if (!std::filesystem::exists(p / f)) throw std::invalid_argument(fmt::format("{}: checkpoint has no {}", dir, f));
  }
  torch::load(impl_->trainer->policy(), (p / "model.pt").string());
  torch::load(impl_->trainer->optimizer(), (p / "optimizer.pt").string());
  impl_->trainer->policy()->to(impl_->device);
  copy_weights(impl_->trainer->policy(), impl_->engine->model());
  // Bounded reads, and a malformed file refused by the path of what is wrong.
  constexpr std::size_t kMaxStateBytes = std::size_t{4} << 30;
  constexpr std::int64_t kMaxTok = std::int64_t{1} << 31;
  const auto samples_path = (p / "samples.json").string();
  const auto samples_doc = base::parse_json_document(base::read_file_bounded(samples_path, kMaxStateBytes, "checkpoint"), samples_path);
  impl_->store.clear();
  for (const auto& s : base::JsonValue(samples_doc, samples_path).elements()) {
    Stored st;
    st.prompt_id = s.at("prompt_id").string();
    for (const auto t : s.at("tokens").integers(0, kMaxTok)) st.tokens.push_back(static_cast<std::int32_t>(t));
    for (const double lp : s.at("logprobs").numbers(-1e30, 1)) st.logprobs.push_back(static_cast<float>(lp));
    impl_->store[static_cast<rl::SampleKey>(s.at("key").integer(0, INT64_MAX))] = std::move(st);
  }
  impl_->flight.clear();
  impl_->train_to_start.reset();
  impl_->engine_version = 0;
  // Checkpoints written before overlapped runs could be saved have no overlap.json.
  const auto overlap_path = (p / "overlap.json").string();
  if (std::filesystem::exists(overlap_path)) {
    const auto overlap_doc = base::parse_json_document(base::read_file_bounded(overlap_path, kMaxStateBytes, "checkpoint"), overlap_path);
    const base::JsonValue o(overlap_doc, overlap_path);
    impl_->engine_version = o.at("engine_version").integer(0, INT64_MAX);
    if (const auto job = o.find("train_job")) {
      std::vector<TrainSampleData> data;
      for (const auto& d : job->at("samples").elements()) {
        TrainSampleData t;
        for (const auto v : d.at("prompt").integers(0, kMaxTok)) t.prompt.push_back(static_cast<std::int32_t>(v));
        for (const auto v : d.at("response").integers(0, kMaxTok)) t.response.push_back(static_cast<std::int32_t>(v));
        for (const double v : d.at("rollout_logprobs").numbers(-1e30, 1)) t.rollout_logprobs.push_back(static_cast<float>(v));
        t.token_version = d.at("token_version").integers(0, INT64_MAX);
        t.reward = d.at("reward").number(-1e30, 1e30);
        t.group = d.at("group").integer(0, INT64_MAX);
        data.push_back(std::move(t));
      }
      impl_->train_to_start.emplace(std::move(data), job->at("version").integer(0, INT64_MAX));
    }
  }
}

}  // namespace april::live
