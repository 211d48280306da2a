#include "adapters/sim/sim_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "base/cache_lines.hpp"

namespace april::adapters {

SimBackend::SimBackend(SimBackendConfig config, std::shared_ptr<const sim::IterationModel> model)
    : config_(std::move(config)),
      model_(std::move(model)),
      by_requests_(
          static_cast<std::size_t>(std::max<std::int64_t>(1, config_.engines + std::max<std::int64_t>(0, config_.hybrid_engines)))),
      by_predicted_tok_(
          static_cast<std::size_t>(std::max<std::int64_t>(1, config_.engines + std::max<std::int64_t>(0, config_.hybrid_engines)))) {
  if (config_.engines < 1) throw std::invalid_argument("need at least one engine");
  if (config_.hybrid_engines < 0) throw std::invalid_argument("hybrid engines must be >= 0");
  if (config_.hybrid_engines > 0 && (!config_.can_overlap || !config_.hybrid_model)) {
    throw std::invalid_argument("hybrid engines need a disaggregated cluster and their own iteration model");
  }
  config_.engine.report_windows = config_.record_windows;
  config_.hybrid_engine.report_windows = config_.record_windows;
  standalone_ = static_cast<std::size_t>(config_.engines);
  for (std::int64_t i = 0; i < config_.engines; ++i) {
    engines_.push_back(std::make_unique<sim::Engine>(static_cast<std::size_t>(i), sim_, *model_, config_.engine,
                                                     static_cast<sim::EngineListener&>(*this)));
  }
  for (std::int64_t i = 0; i < config_.hybrid_engines; ++i) {
    engines_.push_back(std::make_unique<sim::Engine>(standalone_ + static_cast<std::size_t>(i), sim_, *config_.hybrid_model,
                                                     config_.hybrid_engine, static_cast<sim::EngineListener&>(*this)));
    engines_.back()->pause();  // the trainer's until lent
  }
}

void SimBackend::note_load(std::size_t engine) {
  by_requests_.set(engine, static_cast<std::int64_t>(engines_[engine]->outstanding()));
  if (predictions_seen_) by_predicted_tok_.set(engine, engines_[engine]->predicted_outstanding_tok());
}

std::size_t SimBackend::route(const SampleRequest& r) const {
  const LeastLoaded& index = r.predicted_remaining_tok > 0 ? by_predicted_tok_ : by_requests_;
  if (r.engine_count == 0) return hybrid_routable_ || standalone_ == engines_.size() ? index.least() : index.least_in(0, standalone_);
  if (r.engine_first < 0 || r.engine_count < 0 ||
      static_cast<std::size_t>(r.engine_first) + static_cast<std::size_t>(r.engine_count) > standalone_) {
    throw std::invalid_argument(fmt::format("engine range [{}, {}) outside the {} engines", r.engine_first,
                                            std::int64_t{r.engine_first} + r.engine_count, standalone_));
  }
  return index.least_in(static_cast<std::size_t>(r.engine_first),
                        static_cast<std::size_t>(r.engine_first) + static_cast<std::size_t>(r.engine_count));
}

void SimBackend::submit(const SampleRequest& r) {
  // Least outstanding requests; with the policy's prediction, least
  // predicted work (Seer's balancing); among the request's engine range
  // where it names one (StreamRL's pools). Ties go to the lowest index.
  if (r.predicted_remaining_tok > 0 && !predictions_seen_) {
    // The first prediction: from now on every change keeps this index too.
    predictions_seen_ = true;
    for (std::size_t i = 0; i < engines_.size(); ++i) note_load(i);
  }
  std::size_t best_index = route(r);
  if (best_index >= standalone_ && std::int64_t{r.prompt_tok} + r.generated_tok + r.max_new_tok > config_.hybrid_engine.kv_capacity_tok) {
    // A context that may outgrow a hybrid engine's KV cache (the trainer's
    // GPUs may hold less), by what a router knows (prompt, tokens held, the
    // most it may add): a rollout engine takes it.
    best_index = (r.predicted_remaining_tok > 0 ? by_predicted_tok_ : by_requests_).least_in(0, standalone_);
  }
  sim::Engine* best = engines_[best_index].get();
  sim::EngineRequest er;
  er.key = r.key;
  er.prompt_tok = r.prompt_tok;
  er.generated_tok = r.generated_tok;
  er.stop_at_tok = r.generated_tok + std::min(r.max_new_tok, std::max(0, r.target_response_tok - r.generated_tok));
  if (er.stop_at_tok <= er.generated_tok) throw std::logic_error("submitted a sample that has already finished");
  er.touched_on_finish = r.records_at;
  er.cached_tok = std::min(r.cached_tok, r.prompt_tok + r.generated_tok);
  er.stop_is_max_new = r.max_new_tok < r.target_response_tok - r.generated_tok;
  // The loop refuses a prediction past 2^31 - 1 tokens in all (RlLoop::flush_submissions).
  if (r.predicted_remaining_tok > 0) er.predicted_end_tok = static_cast<std::int32_t>(er.generated_tok + r.predicted_remaining_tok);
  if (static_cast<std::int64_t>(er.prompt_tok) + er.stop_at_tok > config_.engine.kv_capacity_tok) {
    throw std::invalid_argument(
        fmt::format("prompt '{}' (sample {}) needs {} KV tokens ({} prompt + {} response), more than the engine KV capacity of {} tokens; "
                    "raise engine.kv_capacity_tok or lower max_response_len",
                    r.prompt_id, rl::key_index(r.key), static_cast<std::int64_t>(er.prompt_tok) + er.stop_at_tok, er.prompt_tok,
                    er.stop_at_tok, config_.engine.kv_capacity_tok));
  }
  best->submit(er);
  note_load(best_index);
  // Submissions come in runs (a step's start, a group's refill): the engine
  // the next one goes to is most likely the least loaded now, far in memory
  // at a large cluster's size; ask for it while the caller prepares it.
  const sim::Engine* next = engines_[route(r)].get();
  base::prefetch_lines(base::cache_lines_of(next));
}

double SimBackend::train_speed_now() const {
  const bool busy = std::any_of(engine_running_.begin(), engine_running_.end(), [](std::int64_t r) { return r > 0; });
  return busy ? 1.0 / config_.train_slowdown_beside_engines : 1.0;
}

void SimBackend::schedule_train_end() {
  train_end_event_ =
      sim_.schedule_at(train_progress_at_ + sim::TimeNs::from_s(train_work_left_s_ / train_speed_), sim::kTagTrainEnd, [this] {
        train_running_ = false;
        train_ended_ = true;
        for (auto& e : engines_) e->set_time_factor(1.0);
      });
}

void SimBackend::on_running_changed(std::size_t engine, sim::TimeNs now, const sim::EngineOccupancy& occupancy) {
  const std::int64_t running = occupancy.running;
  // Called at every boundary and abort, after the engine's queues changed
  // and before it reports what finished: the router's index follows here.
  note_load(engine);
  if (engine_running_.size() <= engine) engine_running_.resize(engine + 1, 0);
  engine_running_[engine] = running;
  if (train_running_ && config_.train_slowdown_beside_engines != 1.0) {
    const double speed = train_speed_now();
    if (speed != train_speed_) {
      // The step's progress so far at the old speed; the rest at the new one.
      // (A step still in its handoff has not started computing.)
      if (now > train_progress_at_) {
        train_work_left_s_ = std::max(0.0, train_work_left_s_ - (now - train_progress_at_).to_s() * train_speed_);
        train_progress_at_ = now;
      }
      train_speed_ = speed;
      sim_.cancel(train_end_event_);
      schedule_train_end();
    }
  }
  if (!config_.record_timeline) return;
  if (last_recorded_.size() <= engine) last_recorded_.resize(engine + 1, {0, 0});
  const std::pair<std::int64_t, std::int64_t> now_counts{running, occupancy.waiting};
  if (last_recorded_[engine] == now_counts) return;  // per-iteration stepping repeats itself
  last_recorded_[engine] = now_counts;
  timeline_.push_back({now.ns(), static_cast<std::int64_t>(engine), running, occupancy.waiting, occupancy.kv_tok});
}

void SimBackend::on_window(std::size_t engine, const sim::EngineWindow& w) {
  windows_.push_back({w.start.ns(), w.end.ns(), static_cast<std::int64_t>(engine), w.iterations, w.batch, w.kv_tok, w.prefill_tok,
                      w.prefill_requests, w.aborted});
}

void SimBackend::on_request_finished(std::size_t engine, sim::RequestKey key, std::int32_t new_tok, sim::TokensByVersion by_version,
                                     bool stopped_at_max_new) {
  finished_.push_back({engine, SampleProgress{key, new_tok, std::move(by_version)}});
  finished_.back().second.stopped_at_max_new = stopped_at_max_new;
}

std::vector<SampleProgress> SimBackend::wait_for_completions() {
  std::vector<SampleProgress> out;
  wait_for_completions_into(out);
  return out;
}

void SimBackend::wait_for_completions_into(std::vector<SampleProgress>& out) {
  while (finished_.empty()) {
    if (!sim_.has_pending()) throw std::logic_error("wait_for_completions with nothing in flight");
    // Run every event at the next instant, so that all engines agree on it
    // whatever the event granularity (fast-forward or per iteration).
    sim_.run_until(sim_.next_event_time());
  }
  take_completions_at_this_instant(out);
}

std::vector<SampleProgress> SimBackend::wait_for_completions_at_this_instant() {
  std::vector<SampleProgress> out;
  take_completions_at_this_instant(out);
  return out;
}

void SimBackend::take_completions_at_this_instant(std::vector<SampleProgress>& out) {
  // By engine, stably; usually one engine's, already in order (stable_sort would allocate).
  const auto by_engine = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(finished_.begin(), finished_.end(), by_engine)) std::stable_sort(finished_.begin(), finished_.end(), by_engine);
  out.clear();
  out.reserve(finished_.size());
  for (auto& f : finished_) out.push_back(std::move(f.second));  // cleared next: no copy of tokens-by-version
  finished_.clear();
}

std::vector<SampleProgress> SimBackend::abort_all() {
  // Hybrid engines are never lent here: colocated runs have none, and an
  // overlapped run is suspended only with the trainer's GPUs its own.
  if (trainer_gpus_ != TrainerGpus::Training) throw std::logic_error("abort_all while the trainer's GPUs are lent");
  const auto engines = rollout_engines();
  const bool any = std::any_of(engines.begin(), engines.end(), [](const auto& e) { return e->outstanding() > 0; });
  if (!any) return {};
  // The abort is on its way: the engines go on generating until it arrives.
  const sim::TimeNs arrive = sim_.now() + sim::TimeNs::from_s(config_.abort_latency_s);
  while (sim_.has_pending() && sim_.next_event_time() < arrive) sim_.step();
  sim_.advance_to(arrive);
  // Each engine finishes the iteration in progress and starts no other.
  std::vector<sim::TimeNs> idle_at;
  for (const auto& e : engines) {
    e->pause(true);
    idle_at.push_back(e->busy_until());
  }
  while (std::any_of(engines.begin(), engines.end(), [](const auto& e) { return e->busy(); })) {
    sim_.run_until(sim_.next_event_time());
  }
  // Then each releases what it still holds; the slowest one ends the abort.
  sim::TimeNs end = sim_.now();
  for (std::size_t i = 0; i < engines.size(); ++i) {
    const auto held = static_cast<double>(engines[i]->outstanding());
    end = std::max(end, idle_at[i] + sim::TimeNs::from_s(held * config_.abort_per_request_s));
  }
  sim_.advance_to(end + sim::TimeNs::from_s(config_.abort_confirm_s));
  std::vector<SampleProgress> out = wait_for_completions_at_this_instant();
  for (auto& p : out) p.finished = true;
  for (const auto& e : engines) {
    for (auto& a : e->abort_all()) out.push_back({a.key, a.new_tok, std::move(a.by_version), false});
    e->resume(e->version(), false);
  }
  resumed_since_wait_ = true;
  return out;
}

rl::TrainPhases SimBackend::train_phases_of(const std::vector<TrainSample>& batch, std::int64_t local_steps) const {
  if (!config_.train_time_s) return {};
  // One pass over the batch (at 4,096 GPUs, 16 MiB of samples far past the caches).
  rl::TrainBatchTokens b;
  std::vector<std::int64_t> sample_tok;
  sample_tok.reserve(batch.size());
  for (const auto& s : batch) {
    sample_tok.push_back(rl::train_tokens_of(s));
    b.add(sample_tok.back());
  }
  TrainBatchShape shape{b.samples, b.tokens, b.longest_tok, b.attention_pairs};
  shape.sample_tok = std::move(sample_tok);
  shape.step_parts = local_steps;
  const auto t = config_.train_time_s(shape);
  return {t.old_logprob_s, t.ref_logprob_s, t.update_s, t.grad_reduce_s, t.optimizer_s, t.offload_s, t.other_s};
}

double SimBackend::train_time_of(const rl::TrainPhases& p) {
  return p.old_logprob_s + p.ref_logprob_s + p.update_s + p.grad_reduce_s + p.optimizer_s + p.offload_s + p.other_s;
}

TrainReport SimBackend::train(const std::vector<TrainSample>& batch, std::int64_t /*version*/) {
  const auto phases = train_phases_of(batch);
  sim_.advance_to(sim_.now() + sim::TimeNs::from_s(train_time_of(phases)));
  TrainReport r;
  if (config_.train_time_s) r.phases = phases;
  return r;
}

void SimBackend::start_train(const std::vector<TrainSample>& batch, std::int64_t /*version*/, std::int64_t local_steps) {
  if (train_running_ || sync_running_ || trainer_gpus_ != TrainerGpus::Training)
    throw std::logic_error("start_train while the trainer is busy");
  train_running_ = true;
  for (auto& e : engines_) e->set_time_factor(config_.engine_slowdown_beside_train);
  train_phases_ = train_phases_of(batch, local_steps);
  train_work_left_s_ = train_time_of(train_phases_);
  train_progress_at_ = sim_.now() + sim::TimeNs::from_s(config_.train_handoff_s);
  // Engines given work at this instant start their iteration after it: they count as busy now.
  const bool engines_busy = std::any_of(engines_.begin(), engines_.end(), [](const auto& e) { return e->outstanding() > 0; });
  train_speed_ = engines_busy ? 1.0 / config_.train_slowdown_beside_engines : 1.0;
  schedule_train_end();
}

void SimBackend::start_sync(std::int64_t new_version, bool recompute) {
  if (train_running_ || sync_running_ || trainer_gpus_ != TrainerGpus::Training)
    throw std::logic_error("start_sync while the trainer is busy");
  sync_running_ = true;
  // An iteration that began at this instant has done nothing yet: the engine
  // is at its boundary and waits for the new weights (docs/design.md 3b: an idle
  // engine starts its next iteration only after the instant's decisions).
  for (const auto& e : rollout_engines()) e->pause(true);
  sim_.schedule_in(sim::TimeNs::from_s(config_.sync_time_s), sim::kTagSyncEnd, [this, new_version, recompute] {
    for (const auto& e : rollout_engines()) e->resume(new_version, recompute);
    resumed_since_wait_ = true;
    sync_running_ = false;
    sync_ended_ = true;
  });
}

void SimBackend::start_publish(std::int64_t new_version) {
  if (train_running_ || sync_running_) throw std::logic_error("start_publish while the trainer is busy");
  sync_running_ = true;
  sim_.schedule_in(sim::TimeNs::from_s(config_.sync_time_s), sim::kTagSyncEnd, [this, new_version] {
    published_version_ = new_version;
    sync_running_ = false;
    sync_ended_ = true;
  });
}

void SimBackend::start_pull(std::int32_t engine) {
  if (engine < 0 || static_cast<std::size_t>(engine) >= engines_.size()) {
    throw std::logic_error(fmt::format("start_pull: engine {} of {}", engine, engines_.size()));
  }
  if (pulling_.empty()) pulling_.assign(engines_.size(), 0);
  if (pulling_[static_cast<std::size_t>(engine)] != 0) throw std::logic_error(fmt::format("start_pull: engine {} is pulling", engine));
  pulling_[static_cast<std::size_t>(engine)] = 1;
  auto& e = *engines_[static_cast<std::size_t>(engine)];
  e.pause(true);
  const std::int64_t version = published_version_;
  sim_.schedule_in(sim::TimeNs::from_s(config_.pull_time_s), sim::engine_event_tag(sim::kTagPullEnd, static_cast<std::size_t>(engine)),
                   [this, engine, version] {
                     engines_[static_cast<std::size_t>(engine)]->resume(version, false);
                     pulling_[static_cast<std::size_t>(engine)] = 0;
                     resumed_since_wait_ = true;
                     pulled_.push_back(engine);
                   });
}

void SimBackend::move_requests(std::int32_t from, std::int32_t to) {
  const auto n = static_cast<std::int32_t>(standalone_);
  if (from < 0 || from >= n || to < 0 || to >= n || from == to) {
    throw std::logic_error(fmt::format("move_requests: engine {} to engine {} of {}", from, to, n));
  }
  auto& dest = *engines_[static_cast<std::size_t>(to)];
  for (auto& r : engines_[static_cast<std::size_t>(from)]->take_all()) dest.adopt(std::move(r));
  note_load(static_cast<std::size_t>(from));
  note_load(static_cast<std::size_t>(to));
}

rl::BackendEvents SimBackend::wait_for_events() {
  rl::BackendEvents ev;
  wait_for_events_into(ev);
  return ev;
}

void SimBackend::wait_for_events_into(rl::BackendEvents& ev) {
  // The caller has made its decisions for the last instant: idle engines start now.
  // Only a resume leaves an engine idle with work (a submission to a running
  // engine kicks it itself), so the scan runs after a sync only.
  if (resumed_since_wait_) {
    for (auto& e : engines_) e->start_if_idle();
    resumed_since_wait_ = false;
  }
  while (finished_.empty() && !train_ended_ && !sync_ended_ && pulled_.empty() && !lent_ && !reclaimed_) {
    if (!sim_.has_pending()) throw std::logic_error("wait_for_events with nothing in flight, training or syncing");
    sim_.run_until(sim_.next_event_time());
  }
  take_completions_at_this_instant(ev.finished);
  ev.train_ended.reset();
  if (train_ended_) {
    ev.train_ended = TrainReport{};
    if (config_.train_time_s) ev.train_ended->phases = train_phases_;
  }
  ev.sync_ended = sync_ended_;
  ev.lent = lent_;
  ev.reclaimed = reclaimed_;
  train_ended_ = sync_ended_ = lent_ = reclaimed_ = false;
  std::sort(pulled_.begin(), pulled_.end());
  ev.pulled.swap(pulled_);
  pulled_.clear();
}

void SimBackend::sync_weights(std::int64_t new_version) {
  // Colocated: the engines are idle (the phase ended with an abort).
  for (auto& e : engines_) e->pause();
  sim_.advance_to(sim_.now() + sim::TimeNs::from_s(config_.sync_time_s));
  for (auto& e : engines_) e->resume(new_version, false);
  resumed_since_wait_ = true;
}

BackendCounters SimBackend::counters() const {
  BackendCounters c;
  for (std::size_t i = 0; i < engines_.size(); ++i) {
    const auto& ec = engines_[i]->counters();
    // Busy and slot time are the rollout engines' (the figures per engine
    // divide by engines()); a hybrid engine's work shows in tokens.
    if (i < standalone_) {
      c.busy_engine_s += static_cast<double>(ec.busy_ns) * 1e-9;
      c.running_slot_s += static_cast<double>(ec.running_ns) * 1e-9;
    }
    c.preemptions += ec.preemptions;
    c.prefill_tok += ec.prefill_tok;
  }
  return c;
}

}  // namespace april::adapters
