#include "rl/rl_loop.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

namespace april::rl {

using policies::GroupId;

RlLoop::RlLoop(Backend& backend, policies::Policy& policy, base::WorkloadSource& workload, LoopOptions options)
    : backend_(backend), policy_(policy), workload_(workload), opt_(options) {
  if (opt_.batch_size < 1) throw std::invalid_argument("rollout_batch_size must be >= 1");
  if (opt_.max_response_len < 1) throw std::invalid_argument("max_response_len must be >= 1");
}

RlLoop::Group& RlLoop::group_ref(GroupId id) {
  auto it = groups_.find(id);
  if (it == groups_.end()) throw std::logic_error(fmt::format("policy named unknown group {}", id));
  return it->second;
}

const RlLoop::Group& RlLoop::group_ref(GroupId id) const {
  auto it = groups_.find(id);
  if (it == groups_.end()) throw std::logic_error(fmt::format("unknown group {}", id));
  return it->second;
}

policies::GroupInfo RlLoop::group(GroupId id) const {
  const Group& g = group_ref(id);
  policies::GroupInfo info;
  info.id = id;
  info.samples = static_cast<std::int32_t>(g.samples.size());
  info.finished_samples = g.finished;
  info.complete = g.finished == info.samples;
  for (const auto& s : g.samples) {
    info.generated_tok += s.generated_tok;
    for (const auto& seg : s.segments) {
      if (info.oldest_version < 0 || seg.version < info.oldest_version) info.oldest_version = seg.version;
      if (seg.version < version_) info.offpolicy_tok += seg.tokens;
    }
  }
  return info;
}

std::int64_t RlLoop::group_tokens(const Group& g) const {
  std::int64_t n = 0;
  for (const auto& s : g.samples) n += s.generated_tok;
  return n;
}

std::int64_t RlLoop::buffered_tok() const {
  // Between colocated steps only buffered groups are held; overlapped, also
  // the groups in flight and those queued for training.
  std::int64_t n = 0;
  for (const auto& [id, g] : groups_) n += group_tokens(g);
  return n;
}

std::vector<std::vector<Segment>> RlLoop::group_segments(GroupId id) const {
  std::vector<std::vector<Segment>> out;
  for (const auto& s : group_ref(id).samples) out.push_back(s.segments);
  return out;
}

std::vector<SampleState> RlLoop::group_samples(GroupId id) const {
  std::vector<SampleState> out;
  for (const auto& s : group_ref(id).samples) out.push_back({s.generated_tok, s.finished});
  return out;
}

const std::string& RlLoop::prompt_id(GroupId id) const { return group_ref(id).prompt_id; }

void RlLoop::add_progress(Sample& s, const SampleProgress& p) {
  if (p.by_version.empty()) return add_tokens(s, p.new_tok, version_);
  std::int64_t sum = 0;
  for (const auto& [version, tokens] : p.by_version) {
    if (version > version_) throw std::logic_error(fmt::format("backend reported tokens of version {} while rolling out {}", version, version_));
    add_tokens(s, tokens, version);
    sum += tokens;
  }
  if (sum != p.new_tok) throw std::logic_error("backend's tokens by version do not add up to its progress");
}

void RlLoop::add_tokens(Sample& s, std::int32_t new_tok, std::int64_t version) {
  if (new_tok < 0) throw std::logic_error("backend reported negative progress");
  if (new_tok == 0) return;
  s.generated_tok += new_tok;
  if (s.generated_tok > opt_.max_response_len) throw std::logic_error("a sample generated past max_response_len");
  if (!s.segments.empty() && s.segments.back().version == version) {
    s.segments.back().tokens += new_tok;
  } else {
    s.segments.push_back({version, new_tok});
  }
  total_generated_ += new_tok;
  phase_metrics_->tokens_generated += new_tok;
}

void RlLoop::discard_tokens(Group& g) {
  const std::int64_t n = group_tokens(g);
  total_wasted_ += n;
  phase_metrics_->tokens_wasted += n;
  for (auto& s : g.samples) {
    s.generated_tok = 0;
    s.segments.clear();
    s.finished = false;
  }
  g.finished = 0;
}

bool RlLoop::filter_rejects(const Group& g) const {
  if (!opt_.dynamic_sampling_filter || g.correct.empty()) return false;
  const bool all_same = std::all_of(g.correct.begin(), g.correct.end(), [&](std::uint8_t c) { return c == g.correct.front(); });
  return all_same;  // DAPO: all right or all wrong gives zero advantage
}

void RlLoop::submit_group(Group& g) {
  g.submit_seq = submit_counter_++;
  if (!policy_.overlaps()) submitted_.push_back(g.id);  // the phase's groups, settled at its end
  ++submitted_total_;
  ++phase_metrics_->groups_submitted;
  if (g.finished == static_cast<std::int32_t>(g.samples.size())) {
    completed_pending_.push_back(g.id);  // complete already (returned unbatched)
    return;
  }
  g.in_flight = true;
  ++in_flight_groups_;
  submit_samples(g);
}

void RlLoop::submit_samples(Group& g) {
  for (std::size_t i = 0; i < g.samples.size(); ++i) {
    Sample& s = g.samples[i];
    if (s.finished) continue;
    if (s.generated_tok > 0 && !s.segments.empty()) phase_metrics_->tokens_carried += s.segments.back().tokens;
    SampleRequest r;
    r.key = make_sample_key(g.id, static_cast<std::int32_t>(i));
    r.prompt_id = g.prompt_id;
    r.prompt_tok = g.prompt_tok;
    r.generated_tok = s.generated_tok;
    r.max_new_tok = opt_.max_response_len - s.generated_tok;
    r.target_response_tok = s.target_tok;
    s.in_flight = true;
    ++in_flight_samples_;
    to_submit_.push_back(std::move(r));
  }
}

void RlLoop::flush_submissions() {
  if (to_submit_.empty()) return;
  std::vector<policies::Submission> subs;
  subs.reserve(to_submit_.size());
  for (const auto& r : to_submit_) subs.push_back({key_group(r.key), key_index(r.key), r.generated_tok});
  const policies::SubmissionPlan plan = policy_.plan_submissions(*this, subs);
  const std::size_t n = to_submit_.size();
  if (!plan.predicted_remaining_tok.empty()) {
    if (plan.predicted_remaining_tok.size() != n) {
      throw std::logic_error(fmt::format("policy predicted {} lengths for {} submissions", plan.predicted_remaining_tok.size(), n));
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (plan.predicted_remaining_tok[i] <= 0) throw std::logic_error("policy predicted a remaining length of 0 or less");
      to_submit_[i].predicted_remaining_tok = plan.predicted_remaining_tok[i];
    }
  }
  std::vector<std::size_t> order = plan.order;
  if (order.empty()) {
    order.resize(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
  }
  std::vector<char> seen(n, 0);
  if (order.size() != n) throw std::logic_error(fmt::format("policy ordered {} of {} submissions", order.size(), n));
  for (std::size_t i : order) {
    if (i >= n || seen[i]) throw std::logic_error("policy's submission order is not a permutation of the submissions");
    seen[i] = 1;
  }
  // Clear the queue before submitting: a backend may call back into the loop.
  std::vector<SampleRequest> queued;
  queued.swap(to_submit_);
  for (std::size_t i : order) backend_.submit(queued[i]);
}

void RlLoop::apply(const policies::Decisions& d) {
  if (batch_) return;  // the phase already ended
  for (const auto& take : d.take_from_buffer) {
    auto it = std::find(buffer_.begin(), buffer_.end(), take.group);
    if (it == buffer_.end()) throw std::logic_error(fmt::format("policy took group {} which is not in the buffer", take.group));
    buffer_.erase(it);
    Group& g = group_ref(take.group);
    if (take.restart) discard_tokens(g);
    submit_group(g);
  }
  if (d.fresh_groups < 0) throw std::logic_error("policy asked for a negative number of groups");
  for (std::int64_t i = 0; i < d.fresh_groups; ++i) {
    base::GroupSpec spec = workload_.next_group(version_);
    Group g;
    g.id = next_group_id_++;
    g.prompt_id = std::move(spec.prompt_id);
    g.prompt_tok = spec.prompt_tok;
    g.correct = std::move(spec.correct);
    for (std::int32_t t : spec.response_tok) g.samples.push_back(Sample{t, 0, {}, false, false});
    if (g.samples.empty() || g.samples.size() > 0xfffffU) throw std::invalid_argument("a group needs 1 to 1M samples");
    auto [it, _] = groups_.emplace(g.id, std::move(g));
    submit_group(it->second);
  }
  flush_submissions();
  if ((d.train || d.start_sync) && !policy_.overlaps()) {
    throw std::logic_error("only a policy that overlaps rollout and training starts train steps or syncs itself");
  }
  if (d.end_with_batch && policy_.overlaps()) throw std::logic_error("an overlapping policy never ends the rollout phase");
  if (d.train) start_train_overlapped(*d.train);
  if (d.start_sync) start_sync_overlapped();
  if (d.end_with_batch) {
    std::unordered_set<GroupId> accepted(accepted_.begin(), accepted_.end());
    std::unordered_set<GroupId> seen;
    for (GroupId id : *d.end_with_batch) {
      if (!accepted.count(id)) throw std::logic_error(fmt::format("policy batched group {} which is not accepted and complete", id));
      if (!seen.insert(id).second) throw std::logic_error(fmt::format("policy batched group {} twice", id));
    }
    if (d.end_with_batch->empty()) throw std::logic_error("policy ended the rollout phase with an empty batch");
    batch_ = *d.end_with_batch;
    drop_unbatched_ = d.drop_unbatched;
  }
}

void RlLoop::on_group_complete(GroupId id) {
  Group& g = group_ref(id);
  // Candidates for the batch besides this group (slime's remaining_batch_size - 1).
  const auto others = static_cast<std::int64_t>(accepted_.size()) + in_flight_groups_ +
                      static_cast<std::int64_t>(completed_pending_.size());
  const bool keep_anyway = opt_.keep_rejected_when_insufficient && others < opt_.batch_size;
  if (!keep_anyway && filter_rejects(g)) {
    g.rejected = true;
    ++rejected_total_;
    ++phase_metrics_->groups_rejected;
    if (++rejected_in_a_row_ > std::max<std::int64_t>(1000, 100 * opt_.batch_size)) {
      throw std::runtime_error(fmt::format(
          "step {}: filter.dynamic_sampling rejected {} groups in a row (every one all correct or all wrong; {} rejected in "
          "all) without accepting one: the workload cannot fill a batch of {} under the filter",
          version_, rejected_in_a_row_, rejected_total_, opt_.batch_size));
    }
    const std::int64_t n = group_tokens(g);
    total_wasted_ += n;
    phase_metrics_->tokens_wasted += n;
    apply(policy_.on_group_rejected(*this, id));
    if (policy_.overlaps()) groups_.erase(id);  // no phase end to settle it
  } else {
    rejected_in_a_row_ = 0;
    g.accepted_s = backend_.now_s();
    accepted_.push_back(id);
    apply(policy_.on_group_accepted(*this, id));
  }
}

bool RlLoop::finish_sample(Group& g, Sample& s, const SampleProgress& p) {
  add_progress(s, p);
  s.in_flight = false;
  s.finished = true;
  --in_flight_samples_;
  if (s.target_tok > opt_.max_response_len) ++phase_metrics_->samples_truncated;
  return ++g.finished == static_cast<std::int32_t>(g.samples.size());
}

void RlLoop::record_finished(const std::vector<SampleProgress>& finished) {
  // Groups completing at one instant are counted in submission order,
  // whichever engines their samples ran on (DESIGN.md section 3).
  const std::size_t first_new = completed_pending_.size();
  for (const SampleProgress& p : finished) {
    Group& g = group_ref(key_group(p.key));
    Sample& s = g.samples.at(static_cast<std::size_t>(key_index(p.key)));
    if (!s.in_flight) throw std::logic_error("backend finished a sample that is not in flight");
    if (finish_sample(g, s, p)) {
      g.in_flight = false;
      --in_flight_groups_;
      completed_pending_.push_back(g.id);
    }
  }
  std::sort(completed_pending_.begin() + static_cast<std::ptrdiff_t>(first_new), completed_pending_.end(),
            [this](GroupId a, GroupId b) { return group_ref(a).submit_seq < group_ref(b).submit_seq; });
}

void RlLoop::drain_completed() {
  while (!completed_pending_.empty() && !batch_) {
    const GroupId id = completed_pending_.front();
    completed_pending_.pop_front();
    on_group_complete(id);
  }
}

StepMetrics RlLoop::run_step() {
  if (policy_.overlaps()) return run_step_overlapped();
  StepMetrics m;
  m.step = version_;
  m.engines = backend_.engines();
  m.max_running = backend_.max_running_per_engine();
  phase_metrics_ = &m;
  submitted_.clear();
  accepted_.clear();
  completed_pending_.clear();
  batch_.reset();
  drop_unbatched_ = false;
  in_flight_groups_ = 0;
  in_flight_samples_ = 0;
  phase_counters_ = backend_.counters();
  phase_start_s_ = backend_.now_s();

  apply(policy_.on_step_start(*this));
  while (!batch_) {
    if (!completed_pending_.empty()) {
      const GroupId id = completed_pending_.front();
      completed_pending_.pop_front();
      on_group_complete(id);
      continue;
    }
    if (in_flight_samples_ == 0) {
      throw std::logic_error(fmt::format("step {}: the policy left nothing in flight without forming a batch "
                                         "({} accepted of {} needed)", version_, accepted_.size(), opt_.batch_size));
    }
    record_finished(backend_.wait_for_completions());
  }
  end_phase(*batch_, m);
  phase_metrics_ = nullptr;
  ++version_;
  return m;
}

void RlLoop::end_phase(const std::vector<GroupId>& batch, StepMetrics& m) {
  // Abort what is still running; its progress is kept. A sample that ends
  // while the abort takes effect is complete; its group, not in the batch,
  // goes back to the buffer with the others.
  const double t_abort_start = backend_.now_s();
  for (const SampleProgress& p : backend_.abort_all()) {
    Group& g = group_ref(key_group(p.key));
    Sample& s = g.samples.at(static_cast<std::size_t>(key_index(p.key)));
    if (!s.in_flight) throw std::logic_error("backend aborted a sample that is not in flight");
    if (p.finished) {
      (void)finish_sample(g, s, p);  // a complete group waits in the buffer like the others
      continue;
    }
    add_progress(s, p);
    s.in_flight = false;
    --in_flight_samples_;
  }
  if (in_flight_samples_ != 0) throw std::logic_error("backend lost track of in-flight samples on abort");
  const double t_rollout_end = backend_.now_s();
  m.abort_time_s = t_rollout_end - t_abort_start;
  const BackendCounters c1 = backend_.counters();

  std::unordered_set<GroupId> in_batch(batch.begin(), batch.end());
  const std::vector<TrainSample> train = take_batch(batch, m, version_);

  // Everything else submitted this phase goes back to the buffer, in
  // submission order, or is dropped when the policy said so.
  for (GroupId id : submitted_) {
    if (in_batch.count(id)) continue;
    Group& g = group_ref(id);
    g.in_flight = false;
    if (g.rejected) {
      groups_.erase(id);
      continue;
    }
    ++m.groups_aborted;
    if (drop_unbatched_) {
      discard_tokens(g);
      groups_.erase(id);
      continue;
    }
    buffer_.push_back(id);
  }

  const TrainReport report = backend_.train(train, version_);
  m.reward_mean = report.reward_mean;
  m.accuracy = report.accuracy;
  m.train_phases = report.phases;
  const double t_train_end = backend_.now_s();
  backend_.sync_weights(version_ + 1);
  const double t_sync_end = backend_.now_s();

  m.start_time_s = phase_start_s_;
  m.rollout_time_s = t_rollout_end - phase_start_s_;
  m.train_time_s = t_train_end - t_rollout_end;
  m.sync_time_s = t_sync_end - t_train_end;
  m.step_time_s = m.rollout_time_s + m.train_time_s + m.sync_time_s;
  m.batch_ready_s = t_abort_start;  // the batch formed at the last acceptance; the abort starts at that instant
  m.train_start_s = t_rollout_end;
  m.train_end_s = t_train_end;
  m.sync_end_s = t_sync_end;
  m.gpus = opt_.gpus;
  m.busy_engine_s = c1.busy_engine_s - phase_counters_.busy_engine_s;
  m.running_slot_s = c1.running_slot_s - phase_counters_.running_slot_s;
  m.preemptions = c1.preemptions - phase_counters_.preemptions;
  m.buffer_groups = static_cast<std::int64_t>(buffer_.size());
  m.buffer_tokens = buffered_tok();
}

std::vector<TrainSample> RlLoop::take_batch(const std::vector<GroupId>& batch, StepMetrics& m, std::int64_t trained_version) {
  // The batch: staleness per token, masking, and what the trainer sees.
  // Tokens staler than this get zero weight: masked, not trained (< 0: none).
  const std::int64_t mask_above = policy_.mask_tokens_staler_than();
  std::vector<TrainSample> train;
  std::vector<std::pair<GroupId, std::string>> batch_ids;
  std::int64_t trained = 0, masked = 0;
  for (GroupId id : batch) {
    Group& g = group_ref(id);
    batch_ids.emplace_back(id, g.prompt_id);
    m.batch_ready_s = std::max(m.batch_ready_s, g.accepted_s);
    for (std::size_t i = 0; i < g.samples.size(); ++i) {
      const Sample& s = g.samples[i];
      TrainSample ts{make_sample_key(id, static_cast<std::int32_t>(i)), g.prompt_tok, s.generated_tok, 0, {}};
      for (const Segment& seg : s.segments) {
        ts.segments.emplace_back(seg.version, seg.tokens);
        const std::int64_t staleness = trained_version - seg.version;
        m.batch_response_tok += seg.tokens;
        m.staleness_token_sum += static_cast<double>(staleness * seg.tokens);
        m.staleness_max = std::max(m.staleness_max, staleness);
        if (staleness >= 1) m.tokens_offpolicy += seg.tokens;
        if (mask_above >= 0 && staleness > mask_above) ts.masked_tok += seg.tokens;
      }
      trained += s.generated_tok - ts.masked_tok;
      masked += ts.masked_tok;
      train.push_back(ts);
    }
  }
  m.tokens_trained += trained;
  m.tokens_masked += masked;
  total_trained_ += trained;
  total_masked_ += masked;
  if (on_batch) on_batch(trained_version, batch_ids);
  for (GroupId id : batch) groups_.erase(id);
  return train;
}

void RlLoop::begin_window() {
  window_ = StepMetrics{};
  window_.step = version_;
  window_.engines = backend_.engines();
  window_.max_running = backend_.max_running_per_engine();
  window_.gpus = opt_.gpus;
  window_.start_time_s = backend_.now_s();
  phase_metrics_ = &window_;
  phase_counters_ = backend_.counters();
}

void RlLoop::start_train_overlapped(const std::vector<GroupId>& batch) {
  if (!trainer_idle() || published_steps_ != trained_steps_) {
    throw std::logic_error(fmt::format("step {}: the policy started a train step while the trainer was busy or its last "
                                       "version was not synced", version_));
  }
  if (batch.empty()) throw std::logic_error("the policy started a train step on an empty batch");
  std::unordered_set<GroupId> seen;
  for (GroupId id : batch) {
    if (std::find(accepted_.begin(), accepted_.end(), id) == accepted_.end()) {
      throw std::logic_error(fmt::format("policy trained group {} which is not queued, accepted and complete", id));
    }
    if (!seen.insert(id).second) throw std::logic_error(fmt::format("policy trained group {} twice", id));
  }
  accepted_.erase(std::remove_if(accepted_.begin(), accepted_.end(), [&](GroupId id) { return seen.count(id) != 0; }),
                  accepted_.end());
  // Batch k is trained by the trainer's version k: staleness = k - the version of each token.
  const std::vector<TrainSample> train = take_batch(batch, window_, trained_steps_);
  window_.train_start_s = train_start_s_ = backend_.now_s();
  backend_.start_train(train, trained_steps_);
  train_running_ = true;
  ++trained_steps_;
}

void RlLoop::start_sync_overlapped() {
  if (train_running_ || sync_running_ || published_steps_ == trained_steps_) {
    throw std::logic_error(fmt::format("step {}: the policy started a sync with the trainer busy or nothing new to push", version_));
  }
  sync_start_s_ = backend_.now_s();
  backend_.start_sync(trained_steps_, policy_.recompute_on_update());
  sync_running_ = true;
  ++published_steps_;
}

void RlLoop::suspend() {
  if (!policy_.overlaps()) throw std::logic_error("suspend is for overlapped runs; a colocated run pauses between steps by itself");
  if (suspended_ || !overlapped_started_) return;
  if (sync_running_) throw std::logic_error("suspend during a sync");
  // A sample that ended in the iteration the abort let finish is complete,
  // its group counted at the next step.
  std::vector<SampleProgress> finished;
  for (SampleProgress& p : backend_.abort_all()) {
    if (p.finished) {
      finished.push_back(std::move(p));
      continue;
    }
    Sample& s = group_ref(key_group(p.key)).samples.at(static_cast<std::size_t>(key_index(p.key)));
    if (!s.in_flight) throw std::logic_error("backend returned a sample that is not in flight");
    add_progress(s, p);
    s.in_flight = false;
    --in_flight_samples_;
  }
  record_finished(finished);
  suspended_ = true;
}

void RlLoop::resubmit_suspended() {
  std::vector<Group*> held;
  for (auto& [id, g] : groups_) {
    if (g.in_flight) held.push_back(&g);
  }
  std::sort(held.begin(), held.end(), [](const Group* a, const Group* b) { return a->submit_seq < b->submit_seq; });
  for (Group* g : held) submit_samples(*g);
  flush_submissions();
  suspended_ = false;
}

StepMetrics RlLoop::run_step_overlapped() {
  if (!backend_.can_overlap()) {
    throw std::logic_error("this policy overlaps rollout and training; the backend cannot (a disaggregated cluster is needed)");
  }
  if (!overlapped_started_) {
    overlapped_started_ = true;
    begin_window();
    apply(policy_.on_step_start(*this));
  }
  if (suspended_) resubmit_suspended();
  while (!finished_step_) {
    drain_completed();
    if (in_flight_samples_ == 0 && !train_running_ && !sync_running_) {
      throw std::logic_error(fmt::format("step {}: the policy left nothing in flight, training or syncing ({} groups queued)",
                                         version_, accepted_.size()));
    }
    const BackendEvents ev = backend_.wait_for_events();
    // One instant, in this order: samples and groups that completed, the
    // train step that ended, the sync that ended (DESIGN.md 3b).
    record_finished(ev.finished);
    drain_completed();
    const double now = backend_.now_s();
    if (ev.train_ended) {
      train_running_ = false;
      window_.train_end_s = now;
      window_.train_time_s = now - train_start_s_;
      window_.reward_mean = ev.train_ended->reward_mean;
      window_.accuracy = ev.train_ended->accuracy;
      window_.train_phases = ev.train_ended->phases;
      apply(policy_.on_train_end(*this));
    }
    if (ev.sync_ended) {
      sync_running_ = false;
      ++version_;
      StepMetrics& m = window_;
      m.sync_end_s = now;
      m.sync_time_s = now - sync_start_s_;
      m.step_time_s = now - m.start_time_s;
      m.rollout_time_s = m.step_time_s - m.sync_time_s;  // the engines pause while the weights arrive
      const BackendCounters c1 = backend_.counters();
      m.busy_engine_s = c1.busy_engine_s - phase_counters_.busy_engine_s;
      m.running_slot_s = c1.running_slot_s - phase_counters_.running_slot_s;
      m.preemptions = c1.preemptions - phase_counters_.preemptions;
      m.buffer_groups = static_cast<std::int64_t>(accepted_.size());
      m.buffer_tokens = buffered_tok();
      finished_step_ = m;
      begin_window();
      apply(policy_.on_sync_end(*this));
    }
  }
  StepMetrics out = *finished_step_;
  finished_step_.reset();
  return out;
}

nlohmann::json RlLoop::group_json(const Group& g) {
  nlohmann::json gj;
  gj["id"] = g.id;
  gj["prompt_id"] = g.prompt_id;
  gj["prompt_tok"] = g.prompt_tok;
  gj["correct"] = g.correct;
  gj["submit_seq"] = g.submit_seq;
  gj["samples"] = nlohmann::json::array();
  for (const auto& smp : g.samples) {
    nlohmann::json sj;
    sj["target_tok"] = smp.target_tok;
    sj["finished"] = smp.finished;
    sj["segments"] = nlohmann::json::array();
    for (const auto& seg : smp.segments) sj["segments"].push_back({seg.version, seg.tokens});
    gj["samples"].push_back(sj);
  }
  return gj;
}

RlLoop::Group RlLoop::group_from_json(const nlohmann::json& gj) {
  Group g;
  g.id = gj.at("id").get<GroupId>();
  g.prompt_id = gj.at("prompt_id").get<std::string>();
  g.prompt_tok = gj.at("prompt_tok").get<std::int32_t>();
  g.correct = gj.at("correct").get<std::vector<std::uint8_t>>();
  g.submit_seq = gj.value("submit_seq", std::int64_t{0});
  for (const auto& sj : gj.at("samples")) {
    Sample smp;
    smp.target_tok = sj.at("target_tok").get<std::int32_t>();
    smp.finished = sj.at("finished").get<bool>();
    for (const auto& seg : sj.at("segments")) {
      smp.segments.push_back({seg.at(0).get<std::int64_t>(), seg.at(1).get<std::int32_t>()});
      smp.generated_tok += smp.segments.back().tokens;
    }
    if (smp.finished) ++g.finished;
    g.samples.push_back(std::move(smp));
  }
  return g;
}

nlohmann::json RlLoop::save_state() const {
  const bool overlapped = policy_.overlaps();
  if (overlapped && overlapped_started_ && (!suspended_ || in_flight_samples_ != 0)) {
    throw std::logic_error("save_state of an overlapped run: suspend() it first");
  }
  if (!overlapped && phase_metrics_ != nullptr) throw std::logic_error("save_state during a rollout phase");
  nlohmann::json j;
  j["version"] = version_;
  j["next_group_id"] = next_group_id_;
  j["total_generated_tok"] = total_generated_;
  j["total_trained_tok"] = total_trained_;
  j["total_wasted_tok"] = total_wasted_;
  j["total_masked_tok"] = total_masked_;
  j["buffer"] = nlohmann::json::array();
  for (GroupId id : buffer_) j["buffer"].push_back(group_json(group_ref(id)));
  if (overlapped) {
    nlohmann::json o;
    o["started"] = overlapped_started_;
    // In submission order, not the map's: the same run writes the same file.
    std::vector<const Group*> in_flight;
    for (const auto& [id, g] : groups_) {
      if (g.in_flight) in_flight.push_back(&g);
    }
    std::sort(in_flight.begin(), in_flight.end(), [](const Group* a, const Group* b) { return a->submit_seq < b->submit_seq; });
    o["in_flight"] = nlohmann::json::array();
    for (const Group* g : in_flight) o["in_flight"].push_back(group_json(*g));
    // Complete groups not yet counted are queued after those already accepted.
    o["queued"] = nlohmann::json::array();
    for (GroupId id : accepted_) o["queued"].push_back(group_json(group_ref(id)));
    o["complete_uncounted"] = nlohmann::json::array();
    for (GroupId id : completed_pending_) o["complete_uncounted"].push_back(group_json(group_ref(id)));
    o["train_running"] = train_running_;
    o["trained_steps"] = trained_steps_;
    o["published_steps"] = published_steps_;
    o["submitted_total"] = submitted_total_;
    o["rejected_total"] = rejected_total_;
    o["submit_counter"] = submit_counter_;
    // The counts of the step in progress (its times restart with the resumed clock).
    const StepMetrics& w = window_;
    o["window"] = {{"tokens_generated", w.tokens_generated}, {"batch_response_tok", w.batch_response_tok},
                   {"tokens_trained", w.tokens_trained},     {"tokens_offpolicy", w.tokens_offpolicy},
                   {"tokens_wasted", w.tokens_wasted},       {"tokens_masked", w.tokens_masked},
                   {"tokens_carried", w.tokens_carried},     {"staleness_token_sum", w.staleness_token_sum},
                   {"staleness_max", w.staleness_max},       {"groups_submitted", w.groups_submitted},
                   {"groups_rejected", w.groups_rejected},   {"samples_truncated", w.samples_truncated}};
    j["overlapped"] = o;
  }
  return j;
}

void RlLoop::load_state(const nlohmann::json& j) {
  if (phase_metrics_ != nullptr) throw std::logic_error("load_state during a rollout phase");
  if (j.contains("overlapped") != policy_.overlaps()) {
    throw std::invalid_argument(policy_.overlaps() ? "the checkpoint is of a run that does not overlap rollout and training"
                                                   : "the checkpoint is of a run that overlaps rollout and training");
  }
  version_ = j.at("version").get<std::int64_t>();
  next_group_id_ = j.at("next_group_id").get<GroupId>();
  total_generated_ = j.at("total_generated_tok").get<std::int64_t>();
  total_trained_ = j.at("total_trained_tok").get<std::int64_t>();
  total_wasted_ = j.at("total_wasted_tok").get<std::int64_t>();
  // A checkpoint from before masked tokens were counted apart has none.
  total_masked_ = j.value("total_masked_tok", std::int64_t{0});
  groups_.clear();
  buffer_.clear();
  for (const auto& gj : j.at("buffer")) {
    Group g = group_from_json(gj);
    buffer_.push_back(g.id);
    groups_.emplace(g.id, std::move(g));
  }
  if (!j.contains("overlapped")) return;
  const auto& o = j.at("overlapped");
  accepted_.clear();
  completed_pending_.clear();
  in_flight_groups_ = 0;
  in_flight_samples_ = 0;
  for (const auto& gj : o.at("in_flight")) {
    Group g = group_from_json(gj);
    g.in_flight = true;
    ++in_flight_groups_;
    groups_.emplace(g.id, std::move(g));
  }
  for (const auto& gj : o.at("queued")) {
    Group g = group_from_json(gj);
    accepted_.push_back(g.id);
    groups_.emplace(g.id, std::move(g));
  }
  for (const auto& gj : o.at("complete_uncounted")) {
    Group g = group_from_json(gj);
    completed_pending_.push_back(g.id);
    groups_.emplace(g.id, std::move(g));
  }
  train_running_ = o.at("train_running").get<bool>();
  sync_running_ = false;
  trained_steps_ = o.at("trained_steps").get<std::int64_t>();
  published_steps_ = o.at("published_steps").get<std::int64_t>();
  submitted_total_ = o.at("submitted_total").get<std::int64_t>();
  rejected_total_ = o.at("rejected_total").get<std::int64_t>();
  submit_counter_ = o.at("submit_counter").get<std::int64_t>();
  overlapped_started_ = o.at("started").get<bool>();
  if (!overlapped_started_) return;
  suspended_ = true;
  // The step in progress starts again here; a train step that was started
  // computes from the next wait (the backend holds its batch).
  begin_window();
  if (train_running_) window_.train_start_s = train_start_s_ = backend_.now_s();
  if (o.contains("window")) {
    const auto& w = o.at("window");
    StepMetrics& m = window_;
    m.tokens_generated = w.at("tokens_generated").get<std::int64_t>();
    m.batch_response_tok = w.at("batch_response_tok").get<std::int64_t>();
    m.tokens_trained = w.at("tokens_trained").get<std::int64_t>();
    m.tokens_offpolicy = w.at("tokens_offpolicy").get<std::int64_t>();
    m.tokens_wasted = w.at("tokens_wasted").get<std::int64_t>();
    m.tokens_masked = w.at("tokens_masked").get<std::int64_t>();
    m.tokens_carried = w.at("tokens_carried").get<std::int64_t>();
    m.staleness_token_sum = w.at("staleness_token_sum").get<double>();
    m.staleness_max = w.at("staleness_max").get<std::int64_t>();
    m.groups_submitted = w.at("groups_submitted").get<std::int64_t>();
    m.groups_rejected = w.at("groups_rejected").get<std::int64_t>();
    m.samples_truncated = w.at("samples_truncated").get<std::int64_t>();
  }
}

}  // namespace april::rl
