#include "adapters/live/live_backend.hpp"

#include <fmt/format.h>

#include <cmath>

#include <algorithm>
#include <chrono>
#include <future>
#include <utility>

#include "adapters/live/detail/live_backend_impl.hpp"
#include "base/config.hpp"

namespace april::live {
namespace {

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

LiveBackend::LiveBackend(const LiveOptions& options, const LiveTask& task) : impl_(std::make_unique<Impl>(options, task)) {}
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
    throw std::logic_error(
        fmt::format("live backend: sample {} holds {} tokens, the loop says {}", r.key, st.tokens.size(), r.generated_tok));
  }
  if (!impl_->flight.emplace(r.key, InFlight{r.max_new_tok, 0, 0, false, {}}).second) {
    throw std::logic_error(fmt::format("live backend: sample {} submitted while in flight", r.key));
  }
  impl_->enqueue(r.key, r.max_new_tok);
  impl_->note_engine(now_s());
}

std::vector<rl::EngineRunningChange> LiveBackend::take_engine_changes() { return std::exchange(impl_->engine_changes, {}); }
std::vector<rl::EngineWindowSpan> LiveBackend::take_engine_windows() { return std::exchange(impl_->engine_windows, {}); }

std::vector<rl::SampleProgress> LiveBackend::wait_for_completions() {
  for (;;) {
    if (impl_->engine->running() == 0 && impl_->engine->waiting() == 0) {
      throw std::logic_error("wait_for_completions with nothing in flight");
    }
    auto done = impl_->step_engine([this] { return now_s(); });
    if (done.empty()) continue;
    std::vector<rl::SampleProgress> out;
    for (auto& d : done) out.push_back(impl_->deliver(d, true, impl_->engine_version));
    return out;
  }
}

std::vector<rl::SampleProgress> LiveBackend::abort_all() {
  std::vector<rl::SampleProgress> out;
  for (auto& d : impl_->engine->abort_all()) out.push_back(impl_->deliver(d, true, impl_->engine_version));
  impl_->note_engine(now_s());
  return out;
}

rl::TrainReport LiveBackend::train(const std::vector<rl::TrainSample>& batch, std::int64_t version) {
  auto data = train_sample_data(batch, impl_->store, impl_->task, "live backend");
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

// A live trainer's call is what it is: a local step costs what its batch costs.
void LiveBackend::start_train(const std::vector<rl::TrainSample>& batch, std::int64_t version, std::int64_t /*local_steps*/) {
  if (impl_->train_to_start || impl_->train_running.valid() || impl_->sync_to_run) {
    throw std::logic_error("live backend: start_train while the trainer is busy");
  }
  // The batch's tokens are copied out now: the engine goes on while the trainer reads them.
  impl_->train_to_start.emplace(train_sample_data(batch, impl_->store, impl_->task, "live backend"), version);
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
    // waits for the copy, as docs/design.md 3b's engines pause for a sync.
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
    for (auto& d : im.step_engine([this] { return now_s(); })) ev.finished.push_back(im.deliver(d, true, im.engine_version));
    if (beside)
      im.train_record.beside_engine_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - iteration_start).count();
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
  // The longest prompt and response the run allows, of any one valid token.
  const auto token = im.task.end_tokens().empty() ? std::int32_t{0} : im.task.end_tokens().front();
  const std::vector<std::int32_t> prompt(static_cast<std::size_t>(im.task.max_prompt_tok()), token);
  for (std::int64_t i = 0; i < samples; ++i) {
    batch.push_back(filler_sample(prompt, token, static_cast<std::size_t>(im.opt.max_response_len), static_cast<double>(i % 2), i / 8));
  }
  auto step = im.trainer_worker().run([&im, &batch] {
    // The scratch model's initial weights draw from torch's global generator:
    // its state is put back, so the live runs draw what they would have.
    auto generator = at::detail::getDefaultCPUGenerator();
    const auto state = generator.get_state();
    std::optional<Transformer> reference;
    if (im.opt.kl_coef > 0) reference = Transformer(im.config);
    GrpoTrainer scratch(Transformer(im.config), reference, grpo_options(im.opt), im.device);
    scratch.step(batch, 0);
    if (im.device.is_cuda()) torch::cuda::synchronize();
    generator.set_state(state);
  });
  wait_in_slices(step);
  step.get();
}

double LiveBackend::warm_start(const std::function<void(std::int64_t, double)>& progress) {
  double loss = 0;
  if (impl_->opt.sft_steps > 0 && !impl_->task.has_supervised_examples()) {
    throw base::ConfigError(fmt::format("live.sft_steps = {}: {} has no answers to imitate (set live.sft_steps=0)", impl_->opt.sft_steps,
                                        impl_->task.describe()));
  }
  for (std::int64_t step = 0; step < impl_->opt.sft_steps; ++step) {
    std::vector<std::pair<std::vector<std::int32_t>, std::vector<std::int32_t>>> batch;
    for (std::int64_t i = 0; i < impl_->opt.sft_batch; ++i) {
      auto ex = impl_->task.supervised_example(step * impl_->opt.sft_batch + i);
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
  e.eos = impl_->task.end_tokens();
  e.device = impl_->device;
  Transformer eval_model(impl_->config);
  copy_weights(impl_->trainer->policy(), eval_model);
  apply_serving(impl_->opt.serving, e, eval_model);
  KvEngine eng(eval_model, e);
  const auto available = impl_->task.eval_prompt_count();
  if (available >= 0 && prompts > available) {
    throw base::ConfigError(fmt::format("{} held-out prompts asked for, {} has {}", prompts, impl_->task.describe(), available));
  }
  std::vector<std::string> ids;
  for (std::int64_t i = 0; i < prompts; ++i) {
    ids.push_back(impl_->task.eval_prompt_id(i));
    eng.add({static_cast<std::uint64_t>(i), impl_->task.prompt_tokens(ids.back()), 0, impl_->opt.max_response_len, 0});
  }
  double correct = 0;
  std::int64_t finished = 0;
  while (finished < prompts) {
    for (const auto& d : eng.step()) {
      correct += impl_->task.response_reward(ids.at(d.key), d.tokens) >= impl_->task.correct_reward() ? 1.0 : 0.0;
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

}  // namespace april::live
