#include "rl/overlapped_driver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "rl/loop_checkpoint.hpp"
#include "rl/rl_loop.hpp"
#include "rl/sorted_group_ids.hpp"

namespace april::rl {

using policies::GroupId;

void OverlappedDriver::on_rejected(GroupId id) { loop_.state_.groups.erase(id); }

void OverlappedDriver::act_on(const policies::Decisions& d) {
  if (d.end_with_batch) throw std::logic_error("an overlapping policy never ends the rollout phase");
  if (d.train) start_train(*d.train);
  if (d.start_sync) start_sync();
  if (!d.pull.empty()) {
    if (!loop_.policy_.publishes_to_relays()) throw std::logic_error("a policy that does not publish to relays asked engines to pull");
    for (const std::int32_t e : d.pull) {
      if (e < 0 || e >= backend_.engines()) {
        throw std::logic_error(fmt::format("the policy asked engine {} of {} to pull", e, backend_.engines()));
      }
      overlap_.start_pull(e);
      ++pulls_running_;
    }
  }
}

void OverlappedDriver::act_before_submissions(const policies::Decisions& d) {
  if (!d.move_requests.empty()) {
    if (!loop_.policy_.publishes_to_relays())
      throw std::logic_error("a policy that does not publish to relays moved requests between engines");
    for (const auto& [from, to] : d.move_requests) overlap_.move_requests(from, to);
  }
  if (d.lend_trainer && d.reclaim_trainer) throw std::logic_error("the policy lent and reclaimed the trainer's GPUs at once");
  if (d.lend_trainer) lend_trainer();
  if (d.reclaim_trainer) reclaim_trainer();
}

void OverlappedDriver::lend_trainer() {
  if (!loop_.policy_.lends_trainer_gpus()) throw std::logic_error("a policy that does not lend the trainer's GPUs lent them");
  if (!trainer_idle() || published_steps_ != trained_steps_) {
    throw std::logic_error(
        fmt::format("step {}: the policy lent the trainer's GPUs while the trainer was busy or its last "
                    "version was not synced",
                    loop_.state_.version));
  }
  overlap_.start_lend(loop_.state_.version);
  trainer_gpus_ = TrainerGpus::Lending;
  lent_since_s_ = backend_.now_s();
}

void OverlappedDriver::reclaim_trainer() {
  if (trainer_gpus_ != TrainerGpus::Lent) {
    throw std::logic_error(
        fmt::format("step {}: the policy reclaimed the trainer's GPUs, which are not lent (or not yet serving)", loop_.state_.version));
  }
  overlap_.start_reclaim();
  trainer_gpus_ = TrainerGpus::Reclaiming;
}

void OverlappedDriver::begin_window() {
  window_ = StepMetrics{};
  window_.step = loop_.state_.version;
  window_.engines = backend_.engines();
  window_.max_running = backend_.max_running_per_engine();
  window_.gpus = loop_.opt_.gpus;
  window_.start_time_s = backend_.now_s();
  local_ended_ = 0;
  loop_.state_.metrics = &window_;
  window_counters_ = backend_.counters();
}

void OverlappedDriver::start_train(const std::vector<GroupId>& batch) {
  RolloutState& st = loop_.state_;
  if (!trainer_idle() || published_steps_ != trained_steps_) {
    throw std::logic_error(
        fmt::format("step {}: the policy started a train step while the trainer was busy or its last "
                    "version was not synced",
                    st.version));
  }
  if (batch.empty()) throw std::logic_error("the policy started a train step on an empty batch");
  const SortedGroupIds in_batch(batch);
  {
    std::vector<char> repeated(in_batch.size(), 0);
    for (GroupId id : batch) {
      char& flag = repeated[in_batch.find(id)];
      if (flag != 0) throw std::logic_error(fmt::format("policy trained group {} twice", id));
      flag = 1;
    }
  }
  // One pass over the queue, not one per batch group (a 4,096-group batch
  // against as many queued was 2% of a 1,024-GPU run).
  const auto queued =
      static_cast<std::size_t>(std::count_if(st.accepted.begin(), st.accepted.end(), [&](GroupId id) { return in_batch.contains(id); }));
  if (queued != batch.size()) {
    const SortedGroupIds accepted(st.accepted);
    for (GroupId id : batch) {
      if (!accepted.contains(id)) {
        throw std::logic_error(fmt::format("policy trained group {} which is not queued, accepted and complete", id));
      }
    }
  }
  st.accepted.erase(std::remove_if(st.accepted.begin(), st.accepted.end(), [&](GroupId id) { return in_batch.contains(id); }),
                    st.accepted.end());
  // Batch k is trained by the trainer's version k: staleness = k - the version
  // of each token. Its local steps all train toward version k.
  const std::vector<TrainSample> train = loop_.take_batch(batch, window_, trained_steps_);
  const std::int64_t local_steps = loop_.policy_.train_local_steps();
  if (local_steps < 1) throw std::logic_error("a policy trains its steps in fewer than one local step");
  part_start_s_ = backend_.now_s();
  if (local_started_ == 0) window_.train_start_s = part_start_s_;
  overlap_.start_train(train, trained_steps_, local_steps);
  train_running_ = true;
  if (++local_started_ == local_steps) {
    ++trained_steps_;
    local_started_ = 0;
  }
}

void OverlappedDriver::add_train_report(const TrainReport& r) {
  // The first local step's report as it is; later ones add their phases and
  // move the mean reward and accuracy by equal weights (equal shares of the batch).
  const auto n = static_cast<double>(local_ended_++);
  const auto mean_in = [n](std::optional<double>& into, const std::optional<double>& v) {
    into = (n == 0 || !into || !v) ? v : (*into * n + *v) / (n + 1);
  };
  mean_in(window_.reward_mean, r.reward_mean);
  mean_in(window_.accuracy, r.accuracy);
  if (n == 0 || !window_.train_phases || !r.phases) {
    window_.train_phases = r.phases;
    return;
  }
  TrainPhases& p = *window_.train_phases;
  p.old_logprob_s += r.phases->old_logprob_s;
  p.ref_logprob_s += r.phases->ref_logprob_s;
  p.update_s += r.phases->update_s;
  p.grad_reduce_s += r.phases->grad_reduce_s;
  p.optimizer_s += r.phases->optimizer_s;
  p.offload_s += r.phases->offload_s;
  p.other_s += r.phases->other_s;
}

void OverlappedDriver::start_sync() {
  if (train_running_ || sync_running_ || published_steps_ == trained_steps_) {
    throw std::logic_error(
        fmt::format("step {}: the policy started a sync with the trainer busy or nothing new to push", loop_.state_.version));
  }
  sync_start_s_ = backend_.now_s();
  if (loop_.policy_.publishes_to_relays()) {
    overlap_.start_publish(trained_steps_);
  } else {
    overlap_.start_sync(trained_steps_, loop_.policy_.recompute_on_update());
  }
  sync_running_ = true;
  ++published_steps_;
}

void OverlappedDriver::suspend() {
  if (suspended_ || !started_) return;
  if (sync_running_) throw std::logic_error("suspend during a sync");
  if (trainer_gpus_ != TrainerGpus::Training) throw std::logic_error("suspend while the trainer's GPUs are lent to rollout");
  RolloutState& st = loop_.state_;
  // A sample that ended in the iteration the abort let finish is complete,
  // its group counted at the next step.
  std::vector<SampleProgress> finished;
  for (SampleProgress& p : backend_.abort_all()) {
    if (p.finished) {
      finished.push_back(std::move(p));
      continue;
    }
    if (!st.sample(p.key).in_flight) throw std::logic_error("backend returned a sample that is not in flight");
    st.take_back(p);
  }
  st.record_finished(finished);
  suspended_ = true;
}

void OverlappedDriver::resubmit_suspended() {
  std::vector<RolloutGroup*> held;
  loop_.state_.groups.for_each([&](RolloutGroup& g) {
    if (g.in_flight) held.push_back(&g);
  });
  std::sort(held.begin(), held.end(), [](const RolloutGroup* a, const RolloutGroup* b) { return a->submit_seq < b->submit_seq; });
  for (RolloutGroup* g : held) loop_.submit_samples(*g);
  loop_.flush_submissions();
  suspended_ = false;
}

StepMetrics OverlappedDriver::run_step() {
  RolloutState& st = loop_.state_;
  if (!started_) {
    started_ = true;
    begin_window();
    loop_.apply(loop_.policy_.on_step_start(loop_));
  }
  if (suspended_) resubmit_suspended();
  while (!finished_step_) {
    loop_.drain_completed();
    const bool switching = trainer_gpus_ == TrainerGpus::Lending || trainer_gpus_ == TrainerGpus::Reclaiming;
    if (st.in_flight_samples == 0 && !train_running_ && !sync_running_ && pulls_running_ == 0 && !switching) {
      throw std::logic_error(fmt::format("step {}: the policy left nothing in flight, training or syncing ({} groups queued)", st.version,
                                         st.accepted.size()));
    }
    overlap_.wait_for_events_into(events_);
    const BackendEvents& ev = events_;
    // One instant, in this order: samples and groups that completed, the
    // train step that ended, the sync that ended (docs/design.md 3b); then the
    // pulls, and the trainer's GPUs lent or reclaimed.
    loop_.record_finished(ev.finished);
    loop_.drain_completed();
    const double now = backend_.now_s();
    if (ev.train_ended) {
      train_running_ = false;
      window_.train_end_s = now;
      // The trainer's busy time: with local steps, their sum, not the waits between them.
      window_.train_time_s += now - part_start_s_;
      add_train_report(*ev.train_ended);
      loop_.apply(loop_.policy_.on_train_end(loop_));
    }
    if (ev.sync_ended) {
      sync_running_ = false;
      ++st.version;
      StepMetrics& m = window_;
      m.sync_end_s = now;
      m.sync_time_s = now - sync_start_s_;
      m.step_time_s = now - m.start_time_s;
      // The engines pause while the weights arrive; a publish to relays pauses none.
      m.rollout_time_s = loop_.policy_.publishes_to_relays() ? m.step_time_s : m.step_time_s - m.sync_time_s;
      const BackendCounters c1 = backend_.counters();
      m.busy_engine_s = c1.busy_engine_s - window_counters_.busy_engine_s;
      m.running_slot_s = c1.running_slot_s - window_counters_.running_slot_s;
      m.preemptions = c1.preemptions - window_counters_.preemptions;
      m.buffer_groups = static_cast<std::int64_t>(st.accepted.size());
      m.buffer_tokens = st.held_tok();
      if (lent_since_s_) {
        // Still away at the window's end: its share is this window's, the rest the next one's.
        m.trainer_lent_s += now - *lent_since_s_;
        lent_since_s_ = now;
      }
      finished_step_ = m;
      begin_window();
      loop_.apply(loop_.policy_.on_sync_end(loop_));
    }
    if (!ev.pulled.empty()) {
      pulls_running_ -= static_cast<std::int64_t>(ev.pulled.size());
      loop_.apply(loop_.policy_.on_engines_pulled(loop_, ev.pulled));
    }
    if (ev.lent) {
      trainer_gpus_ = TrainerGpus::Lent;
      loop_.apply(loop_.policy_.on_trainer_lent(loop_));
    }
    if (ev.reclaimed) {
      trainer_gpus_ = TrainerGpus::Training;
      if (lent_since_s_) window_.trainer_lent_s += now - *lent_since_s_;
      lent_since_s_.reset();
      loop_.apply(loop_.policy_.on_trainer_reclaimed(loop_));
    }
  }
  StepMetrics out = *finished_step_;
  finished_step_.reset();
  return out;
}

void OverlappedDriver::check_can_save() const {
  if (loop_.policy_.lends_trainer_gpus()) {
    throw std::invalid_argument(
        "saving a run that lends the trainer's GPUs to rollout (elastic) is not supported: where they "
        "are, and the threshold's adaptation, would be lost");
  }
  if (loop_.policy_.publishes_to_relays()) {
    throw std::invalid_argument(
        "saving a run whose engines pull weights one by one (Laminar's relays) is not supported: each "
        "engine's version would be lost");
  }
  if (started_ && (!suspended_ || loop_.state_.in_flight_samples != 0)) {
    throw std::logic_error("save_state of an overlapped run: suspend() it first");
  }
}

void OverlappedDriver::check_kind(bool has_overlapped_part) const {
  if (!has_overlapped_part) throw std::invalid_argument("the checkpoint is of a run that does not overlap rollout and training");
}

std::optional<nlohmann::json> OverlappedDriver::save() const {
  const RolloutState& st = loop_.state_;
  nlohmann::json o;
  o["started"] = started_;
  // In submission order, not the map's: the same run writes the same file.
  std::vector<const RolloutGroup*> in_flight;
  st.groups.for_each([&](const RolloutGroup& g) {
    if (g.in_flight) in_flight.push_back(&g);
  });
  std::sort(in_flight.begin(), in_flight.end(), [](const RolloutGroup* a, const RolloutGroup* b) { return a->submit_seq < b->submit_seq; });
  o["in_flight"] = nlohmann::json::array();
  for (const RolloutGroup* g : in_flight) o["in_flight"].push_back(group_json(*g));
  // Complete groups not yet counted are queued after those already accepted.
  o["queued"] = nlohmann::json::array();
  for (GroupId id : st.accepted) o["queued"].push_back(group_json(st.group(id)));
  o["complete_uncounted"] = nlohmann::json::array();
  for (GroupId id : st.completed_pending) o["complete_uncounted"].push_back(group_json(st.group(id)));
  o["train_running"] = train_running_;
  o["trained_steps"] = trained_steps_;
  o["published_steps"] = published_steps_;
  o["local_steps_started"] = local_started_;
  o["submitted_total"] = st.submitted_total;
  o["rejected_total"] = st.rejected_total;
  o["submit_counter"] = st.submit_counter;
  // The counts of the step in progress (its times restart with the resumed clock).
  o["window"] = window_counts_json(window_);
  return o;
}

void OverlappedDriver::load(const base::JsonValue& o) {
  RolloutState& st = loop_.state_;
  st.accepted.clear();
  st.completed_pending.clear();
  st.in_flight_groups = 0;
  st.in_flight_samples = 0;
  for (const auto& gj : o.at("in_flight").elements()) {
    hold_group_from_json(st, gj).in_flight = true;
    ++st.in_flight_groups;
  }
  for (const auto& gj : o.at("queued").elements()) st.accepted.push_back(hold_group_from_json(st, gj).id);
  for (const auto& gj : o.at("complete_uncounted").elements()) st.completed_pending.push_back(hold_group_from_json(st, gj).id);
  const auto count = [&](const char* key) { return o.at(key).integer(0, INT64_MAX); };
  train_running_ = o.at("train_running").boolean();
  sync_running_ = false;
  trained_steps_ = count("trained_steps");
  published_steps_ = count("published_steps");
  // A checkpoint written before local steps existed has none started.
  local_started_ = 0;
  if (const auto l = o.find("local_steps_started")) local_started_ = l->integer(0, loop_.policy_.train_local_steps() - 1);
  st.submitted_total = count("submitted_total");
  st.rejected_total = count("rejected_total");
  st.submit_counter = count("submit_counter");
  started_ = o.at("started").boolean();
  if (!started_) return;
  suspended_ = true;
  // The step in progress starts again here; a train step that was started
  // computes from the next wait (the backend holds its batch).
  begin_window();
  if (train_running_) window_.train_start_s = part_start_s_ = backend_.now_s();
  if (const auto w = o.find("window")) load_window_counts(*w, window_);
}

}  // namespace april::rl
