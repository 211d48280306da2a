#include "rl/rl_loop.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "base/cache_lines.hpp"
#include "rl/colocated_driver.hpp"
#include "rl/overlapped_driver.hpp"

namespace april::rl {

using policies::GroupId;

namespace {

std::unique_ptr<StepDriver> make_driver(RlLoop& loop, Backend& backend, const policies::Policy& policy) {
  if (!policy.overlaps()) return std::make_unique<ColocatedDriver>(loop, backend);
  OverlappingBackend* overlap = backend.overlapping();
  if (overlap == nullptr) {
    throw std::logic_error("this policy overlaps rollout and training; the backend cannot (a disaggregated cluster is needed)");
  }
  if (policy.publishes_to_relays() && !overlap->pulls_per_engine()) {
    throw std::invalid_argument(
        "this policy publishes weights to relays that each engine pulls from when it is told (Laminar); "
        "this backend's engines cannot pull one by one: run it in the simulator");
  }
  if (policy.lends_trainer_gpus() && overlap->hybrid_engines() == 0) {
    throw std::invalid_argument(
        "this policy lends the idle trainer's GPUs to rollout (elastic splits); this backend has no "
        "engines on the trainer's GPUs: run it in the simulator");
  }
  return std::make_unique<OverlappedDriver>(loop, backend, *overlap);
}

}  // namespace

RlLoop::RlLoop(Backend& backend, policies::Policy& policy, base::WorkloadSource& workload, LoopOptions options)
    : backend_(backend), policy_(policy), workload_(workload), opt_(options) {
  if (opt_.batch_size < 1) throw std::invalid_argument("rollout_batch_size must be >= 1");
  if (opt_.max_response_len < 1) throw std::invalid_argument("max_response_len must be >= 1");
  state_.max_response_len = opt_.max_response_len;
  state_.dynamic_sampling_filter = opt_.dynamic_sampling_filter;
  sample_events_ = policy_.wants_sample_events();
  engines_ = backend_.engines();
  engine_slots_ = engines_ * backend_.max_running_per_engine();
  chunk_tok_ = policy_.chunk_tok();
  chunk_keeps_kv_ = policy_.chunk_keeps_kv();
  if (chunk_tok_ < 0) throw std::logic_error("policy asked for chunks of fewer than 0 tokens");
  if (chunk_tok_ > 0) {
    if (policy_.overlaps()) throw std::logic_error("a policy that overlaps rollout and training cannot chunk requests");
    if (!sample_events_) throw std::logic_error("a policy that chunks requests must take sample events to release the chunks");
    if (!backend_.reports_chunk_ends()) {
      throw std::invalid_argument(
          "this backend cannot report a request stopped at a chunk's end; chunked requests (seer.chunk_tok) "
          "run in the simulator, on april's live engine and over HTTP");
    }
  }
  driver_ = make_driver(*this, backend_, policy_);
}

RlLoop::~RlLoop() = default;

StepMetrics RlLoop::run_step() { return driver_->run_step(); }
void RlLoop::suspend() { driver_->suspend(); }
bool RlLoop::trainer_idle() const { return driver_->trainer_idle(); }
bool RlLoop::sync_running() const { return driver_->sync_running(); }
std::int64_t RlLoop::trained_steps() const { return driver_->trained_steps(); }

std::vector<std::vector<Segment>> RlLoop::group_segments(GroupId id) const {
  std::vector<std::vector<Segment>> out;
  for (const auto& s : state_.group(id).samples) out.emplace_back(s.segments.begin(), s.segments.end());
  return out;
}

std::vector<SampleState> RlLoop::group_samples(GroupId id) const {
  std::vector<SampleState> out;
  for (const auto& s : state_.group(id).samples) out.push_back({s.generated_tok, s.finished});
  return out;
}

const std::string& RlLoop::prompt_id(GroupId id) const { return state_.group(id).prompt_id; }

std::int32_t RlLoop::workload_response_tok(GroupId group, std::int32_t sample) const {
  if (!backend_.lengths_follow_workload()) return -1;
  const RolloutGroup& g = state_.group(group);
  if (sample < 0 || static_cast<std::size_t>(sample) >= g.samples.size()) {
    throw std::logic_error(fmt::format("policy asked for sample {} of group {}, which has {}", sample, group, g.samples.size()));
  }
  return g.samples[static_cast<std::size_t>(sample)].target_tok;
}

void RlLoop::submit_group(RolloutGroup& g) {
  g.submit_seq = state_.submit_counter++;
  driver_->on_submitted(g.id);
  ++state_.submitted_total;
  ++state_.metrics->groups_submitted;
  if (g.finished == static_cast<std::int32_t>(g.samples.size())) {
    state_.completed_pending.push_back(g.id);  // complete already (returned unbatched)
    return;
  }
  g.in_flight = true;
  ++state_.in_flight_groups;
  submit_samples(g);
}

SampleRequest RlLoop::make_request(const RolloutGroup& g, std::size_t index) const {
  const RolloutSample& s = g.samples[index];
  SampleRequest r;
  r.key = make_sample_key(g.id, static_cast<std::int32_t>(index));
  r.prompt_id = g.prompt_id;
  r.prompt_tok = g.prompt_tok;
  r.generated_tok = s.generated_tok;
  r.max_new_tok = opt_.max_response_len - s.generated_tok;
  if (chunk_tok_ > 0) {
    r.max_new_tok = std::min(r.max_new_tok, chunk_tok_);
    if (s.chunk_ended && chunk_keeps_kv_) r.cached_tok = g.prompt_tok + s.generated_tok;
  }
  r.target_response_tok = s.target_tok;
  r.records_at = {base::cache_lines(reinterpret_cast<std::uintptr_t>(&g), RolloutGroup::kHotBytes), base::cache_lines_of(&s)};
  return r;
}

void RlLoop::submit_samples(RolloutGroup& g) {
  for (std::size_t i = 0; i < g.samples.size(); ++i) {
    RolloutSample& s = g.samples[i];
    if (s.finished) continue;
    if (s.generated_tok > 0 && !s.segments.empty()) state_.metrics->tokens_carried += s.segments.back().tokens;
    s.in_flight = true;
    ++state_.in_flight_samples;
    // The request itself is made as it is submitted (flush_submissions): a
    // step's first batch is every sample of the step, 16 bytes each here.
    to_submit_.push_back({g.id, static_cast<std::int32_t>(i), s.generated_tok});
  }
}

void RlLoop::release(const std::vector<policies::SampleRef>& samples) {
  for (const policies::SampleRef& ref : samples) {
    RolloutGroup& g = state_.group(ref.group);
    if (ref.sample < 0 || static_cast<std::size_t>(ref.sample) >= g.samples.size() ||
        !g.samples[static_cast<std::size_t>(ref.sample)].held) {
      throw std::logic_error(fmt::format("policy released sample {} of group {}, which is not held", ref.sample, ref.group));
    }
    g.samples[static_cast<std::size_t>(ref.sample)].held = false;
    --state_.held_samples;
    backend_.submit(make_request(g, static_cast<std::size_t>(ref.sample)));
  }
}

void RlLoop::record_finished(const std::vector<SampleProgress>& finished) {
  std::vector<policies::SampleRef> chunk_ended;
  std::vector<SampleProgress> ended;  // with chunks: the samples that did finish
  if (chunk_tok_ > 0) {
    // A sample stopped at its chunk is held for the policy to send again.
    for (const SampleProgress& p : finished) {
      if (p.stopped_at_max_new && state_.end_chunk(p)) {
        chunk_ended.push_back({key_group(p.key), key_index(p.key)});
      } else {
        ended.push_back(p);
      }
    }
  }
  const std::vector<SampleProgress>& done = chunk_tok_ > 0 ? ended : finished;
  state_.record_finished(done);
  if (!sample_events_ || finished.empty()) return;
  std::vector<policies::SampleRef> refs;
  refs.reserve(done.size());
  for (const SampleProgress& p : done) refs.push_back({key_group(p.key), key_index(p.key)});
  apply(policy_.on_samples_finished(*this, refs, chunk_ended));
}

void RlLoop::flush_submissions() {
  if (to_submit_.empty()) return;
  const policies::SubmissionPlan plan = policy_.plan_submissions(*this, to_submit_);
  const std::size_t n = to_submit_.size();
  if (!plan.predicted_remaining_tok.empty()) {
    if (plan.predicted_remaining_tok.size() != n) {
      throw std::logic_error(fmt::format("policy predicted {} lengths for {} submissions", plan.predicted_remaining_tok.size(), n));
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t predicted = plan.predicted_remaining_tok[i];
      if (predicted <= 0) throw std::logic_error("policy predicted a remaining length of 0 or less");
      // A context's tokens are 32-bit counts everywhere (the simulator's requests hold the predicted end so).
      if (predicted > std::numeric_limits<std::int32_t>::max() - std::int64_t{to_submit_[i].generated_tok}) {
        throw std::logic_error(fmt::format("policy predicted {} more tokens for sample {} of group {}: past 2^31 - 1 in all", predicted,
                                           to_submit_[i].sample, to_submit_[i].group));
      }
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
  if (!plan.engines.empty()) {
    if (plan.engines.size() != n)
      throw std::logic_error(fmt::format("policy gave engine ranges for {} of {} submissions", plan.engines.size(), n));
    for (std::size_t i = 0; i < n; ++i) {
      const policies::EngineRange& e = plan.engines[i];
      if (e.count == 0 && e.first == 0) continue;
      if (e.first < 0 || e.count < 1 || std::int64_t{e.first} + e.count > engines_) {
        throw std::logic_error(
            fmt::format("policy sent a submission to engines [{}, {}) of {}", e.first, std::int64_t{e.first} + e.count, engines_));
      }
      if (e.count < engines_ && !backend_.routes_within_engine_ranges()) {
        throw std::logic_error(fmt::format("policy pinned a submission to {} of the {} engines; this backend routes over every engine only",
                                           e.count, engines_));
      }
    }
  }
  if (!plan.hold.empty()) {
    if (plan.hold.size() != n) throw std::logic_error(fmt::format("policy held {} of {} submissions", plan.hold.size(), n));
    if (policy_.overlaps()) throw std::logic_error("a policy that overlaps rollout and training cannot hold samples");
  }
  // Clear the queue before submitting: a backend may call back into the loop.
  std::vector<policies::Submission> queued;
  queued.swap(to_submit_);
  release(plan.release);
  const auto key_at = [&](std::size_t k) { return make_sample_key(queued[order[k]].group, queued[order[k]].sample); };
  state_.for_each_sample_fetched_ahead(n, key_at, [&](std::size_t k) {
    const std::size_t i = order[k];
    RolloutGroup& g = state_.group(queued[i].group);
    const auto index = static_cast<std::size_t>(queued[i].sample);
    if (!plan.hold.empty() && plan.hold[i] != 0) {
      g.samples[index].held = true;
      ++state_.held_samples;
      return;
    }
    SampleRequest r = make_request(g, index);
    if (!plan.predicted_remaining_tok.empty()) r.predicted_remaining_tok = plan.predicted_remaining_tok[i];
    if (!plan.engines.empty()) {
      r.engine_first = plan.engines[i].first;
      r.engine_count = plan.engines[i].count;
    }
    backend_.submit(r);
  });
  // The queue keeps this batch's room: a step's first batch holds every sample
  // of the step (tens of MiB at thousands of GPUs), which would otherwise be
  // allocated afresh, its pages faulted in and zeroed, at every step.
  if (to_submit_.empty() && queued.capacity() > to_submit_.capacity()) {
    queued.clear();
    to_submit_.swap(queued);
  }
}

void RlLoop::apply(const policies::Decisions& d) {
  if (driver_->phase_ended()) return;
  driver_->act_before_submissions(d);
  for (const auto& take : d.take_from_buffer) {
    auto it = std::find(state_.buffer.begin(), state_.buffer.end(), take.group);
    if (it == state_.buffer.end()) throw std::logic_error(fmt::format("policy took group {} which is not in the buffer", take.group));
    state_.buffer.erase(it);
    RolloutGroup& g = state_.group(take.group);
    if (take.restart) state_.discard_tokens(g);
    submit_group(g);
  }
  if (d.fresh_groups < 0) throw std::logic_error("policy asked for a negative number of groups");
  for (std::int64_t i = 0; i < d.fresh_groups; ++i) {
    base::GroupSpec spec = workload_.next_group(state_.version);
    RolloutGroup g;
    g.id = state_.next_group_id++;
    g.prompt_id = std::move(spec.prompt_id);
    g.prompt_tok = spec.prompt_tok;
    g.correct = std::move(spec.correct);
    g.samples.reserve(spec.response_tok.size());  // one allocation, not one per doubling
    for (std::int32_t t : spec.response_tok) g.samples.push_back(RolloutSample{t, 0, {}, false, false});
    if (g.samples.empty() || g.samples.size() > 0xfffffU) throw std::invalid_argument("a group needs 1 to 1M samples");
    submit_group(state_.groups.emplace(std::move(g)));
  }
  flush_submissions();
  release(d.release);
  driver_->act_on(d);
}

void RlLoop::on_group_complete(GroupId id) {
  RolloutGroup& g = state_.group(id);
  // Candidates for the batch besides this group (slime's remaining_batch_size - 1).
  const auto others = static_cast<std::int64_t>(state_.accepted.size()) + state_.in_flight_groups +
                      static_cast<std::int64_t>(state_.completed_pending.size());
  const bool keep_anyway = opt_.keep_rejected_when_insufficient && others < opt_.batch_size;
  if (!keep_anyway && state_.filter_rejects(g)) {
    g.rejected = true;
    ++state_.rejected_total;
    ++state_.metrics->groups_rejected;
    if (++state_.rejected_in_a_row > std::max<std::int64_t>(1000, 100 * opt_.batch_size)) {
      throw std::runtime_error(
          fmt::format("step {}: filter.dynamic_sampling rejected {} groups in a row (every one all correct or all wrong; {} rejected in "
                      "all) without accepting one: the workload cannot fill a batch of {} under the filter",
                      state_.version, state_.rejected_in_a_row, state_.rejected_total, opt_.batch_size));
    }
    const std::int64_t n = RolloutState::group_tokens(g);
    state_.total_wasted += n;
    state_.metrics->tokens_wasted += n;
    apply(policy_.on_group_rejected(*this, id));
    driver_->on_rejected(id);
  } else {
    state_.rejected_in_a_row = 0;
    g.accepted_s = backend_.now_s();
    state_.accepted.push_back(id);
    apply(policy_.on_group_accepted(*this, id));
  }
}

void RlLoop::drain_completed() {
  while (!state_.completed_pending.empty() && !driver_->phase_ended()) {
    const GroupId id = state_.completed_pending.front();
    state_.completed_pending.pop_front();
    on_group_complete(id);
  }
}

std::vector<TrainSample> RlLoop::take_batch(const std::vector<GroupId>& batch, StepMetrics& m, std::int64_t trained_version) {
  TakenBatch taken = state_.take_batch(batch, m, trained_version, policy_.mask_tokens_staler_than());
  if (on_batch) on_batch(trained_version, taken.ids);
  // The sweep took the records into the cache; at a large cluster's size they
  // have left it again by now: fetched ahead like that sweep's.
  constexpr std::size_t kGroupsAhead = 8;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (i + kGroupsAhead < batch.size()) state_.prefetch_group(batch[i + kGroupsAhead]);
    state_.groups.erase(batch[i]);
  }
  return std::move(taken.samples);
}

}  // namespace april::rl
