#include "policies/seer_policy.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace april::policies {

SeerPolicy::SeerPolicy(std::unique_ptr<Policy> base, SeerScheduling scheduling, std::int32_t chunk_tok, bool chunk_keeps_kv)
    : PolicyDecorator(std::move(base)), scheduling_(scheduling), chunk_tok_(chunk_tok), chunk_keeps_kv_(chunk_keeps_kv) {}

Decisions SeerPolicy::on_step_start(const RolloutView& view) {
  // The loop returned every held sample to the buffer when the last phase
  // ended; estimates are learned again from what each group holds.
  groups_.clear();
  probes_.clear();
  rest_.clear();
  return PolicyDecorator::on_step_start(view);
}

std::optional<std::int64_t> SeerPolicy::estimate_tok(GroupId group) const {
  auto it = groups_.find(group);
  if (it == groups_.end() || it->second.estimate_tok == kUnknown) return std::nullopt;
  return it->second.estimate_tok;
}

SeerPolicy::GroupQueue& SeerPolicy::queue_of(const RolloutView& view, GroupId group) {
  auto [it, fresh] = groups_.try_emplace(group);
  GroupQueue& q = it->second;
  if (fresh) {
    q.seq = next_seq_++;
    // A resumed group (APRIL's buffer) may hold finished samples already:
    // the longest of them is its estimate, and it needs no probe.
    for (const SampleState& s : view.group_samples(group)) {
      if (!s.finished) continue;
      q.estimate_tok = q.estimate_tok == kUnknown ? s.generated_tok : std::max<std::int64_t>(q.estimate_tok, s.generated_tok);
      q.probe_sent = true;
    }
  }
  return q;
}

SeerPolicy::RestKey SeerPolicy::rest_key(GroupId group, const GroupQueue& q) const { return {-q.estimate_tok, q.seq, group}; }

void SeerPolicy::add_to_pool(GroupQueue& q, GroupId group, const Submission& s) {
  if (scheduling_ == SeerScheduling::Fifo) {
    probes_.insert({0, next_seq_++, group, s.sample});
    return;
  }
  if (!q.probe_sent) {
    q.probe_sent = true;
    q.probe = s.sample;
    probes_.insert({s.generated_tok, next_seq_++, group, s.sample});
    return;
  }
  if (q.held.empty()) rest_.insert(rest_key(group, q));
  q.held.push_back(s.sample);
}

std::optional<SampleRef> SeerPolicy::pop_next() {
  if (!probes_.empty()) {
    const auto [generated, seq, group, sample] = *probes_.begin();
    probes_.erase(probes_.begin());
    return SampleRef{group, sample};
  }
  if (rest_.empty()) return std::nullopt;
  const GroupId group = std::get<2>(*rest_.begin());
  GroupQueue& q = groups_.at(group);
  const std::int32_t sample = q.held.front();
  q.held.pop_front();
  if (q.held.empty()) rest_.erase(rest_.begin());
  return SampleRef{group, sample};
}

std::int64_t SeerPolicy::room(const RolloutView& view, std::int64_t sending) {
  const std::int64_t slots = view.engine_slots();
  if (slots <= 0) return INT64_MAX;
  return std::max<std::int64_t>(0, slots - view.dispatched_samples() - sending);
}

SubmissionPlan SeerPolicy::plan_submissions(const RolloutView& view, const std::vector<Submission>& subs) {
  // Every submission joins the pool; then the pool's best go out while the
  // engines have room: this instant's as submissions, earlier ones released.
  std::unordered_map<std::uint64_t, std::size_t> index_of;  // (group, sample) -> submission index
  const auto key = [](GroupId g, std::int32_t s) { return (static_cast<std::uint64_t>(g) << 20) | static_cast<std::uint32_t>(s); };
  for (std::size_t i = 0; i < subs.size(); ++i) {
    add_to_pool(queue_of(view, subs[i].group), subs[i].group, subs[i]);
    index_of.emplace(key(subs[i].group, subs[i].sample), i);
  }
  SubmissionPlan plan;
  plan.hold.assign(subs.size(), 1);
  std::int64_t sending = 0;
  while (sending < room(view, 0)) {
    const std::optional<SampleRef> next = pop_next();
    if (!next) break;
    ++sending;
    auto it = index_of.find(key(next->group, next->sample));
    if (it == index_of.end()) {
      plan.release.push_back(*next);
      continue;
    }
    plan.hold[it->second] = 0;
    plan.order.push_back(it->second);
  }
  // The order is a permutation: what is held follows, in the order given.
  for (std::size_t i = 0; i < subs.size(); ++i) {
    if (plan.hold[i] != 0) plan.order.push_back(i);
  }
  if (view.engine_slots() <= 0) plan.hold.clear();  // no cap: everything goes, in priority order
  return plan;
}

Decisions SeerPolicy::on_samples_finished(const RolloutView& view, const std::vector<SampleRef>& finished,
                                          const std::vector<SampleRef>& chunk_ended) {
  Decisions d = PolicyDecorator::on_samples_finished(view, finished, chunk_ended);
  // Chunks that ended rejoin the pool; every estimate of the instant is
  // updated; then the picks.
  for (const SampleRef& c : chunk_ended) {
    GroupQueue& q = groups_.at(c.group);
    const std::int32_t generated = view.group_samples(c.group).at(static_cast<std::size_t>(c.sample)).generated_tok;
    if (scheduling_ == SeerScheduling::Fifo) {
      probes_.insert({0, next_seq_++, c.group, c.sample});
    } else if (c.sample == q.probe) {
      probes_.insert({generated, next_seq_++, c.group, c.sample});
    } else {
      if (q.held.empty()) rest_.insert(rest_key(c.group, q));
      q.held.push_front(c.sample);
    }
  }
  for (const SampleRef& done : finished) {
    auto it = groups_.find(done.group);
    if (it == groups_.end()) continue;
    GroupQueue& q = it->second;
    const std::int64_t length = view.group_samples(done.group).at(static_cast<std::size_t>(done.sample)).generated_tok;
    const std::int64_t estimate = q.estimate_tok == kUnknown ? length : std::max(q.estimate_tok, length);
    if (estimate == q.estimate_tok) continue;
    if (!q.held.empty()) rest_.erase(rest_key(done.group, q));
    q.estimate_tok = estimate;
    if (!q.held.empty()) rest_.insert(rest_key(done.group, q));
  }
  for (std::int64_t n = room(view, 0); n > 0; --n) {
    const std::optional<SampleRef> next = pop_next();
    if (!next) break;
    d.release.push_back(*next);
  }
  return d;
}

Decisions SeerPolicy::on_group_accepted(const RolloutView& view, GroupId group) {
  groups_.erase(group);
  return PolicyDecorator::on_group_accepted(view, group);
}

Decisions SeerPolicy::on_group_rejected(const RolloutView& view, GroupId group) {
  groups_.erase(group);
  return PolicyDecorator::on_group_rejected(view, group);
}

PolicyEntry seer_policy_entry() {
  using base::Knob;
  using base::KnobType;
  std::vector<Knob> knobs = {
      {keys::kSeerBase.name, KnobType::String, std::string("sync"), "",
       "the synchronous policy Seer schedules for (it decides what to submit and when the batch is complete); its own keys apply",
       base::one_of({"sync", "april"})},
      {keys::kSeerScheduling.name, KnobType::String, std::string("context_aware"), "",
       "which held sample goes next when an engine has room: context_aware (each group's probe first, shortest first; then "
       "longest group estimate first, as Seer) or fifo (submission order: the global pool's balancing alone)",
       base::one_of({"context_aware", "fifo"})},
      {keys::kSeerChunkTok.name, KnobType::Int, std::int64_t{0}, "tok",
       "divided rollout: each request asks for at most this many tokens, then goes back to the pool to be sent again (0: whole "
       "requests; the paper gives no size). The simulator, the live engine and HTTP servers",
       base::in_range(0, 1 << 30)},
      {keys::kSeerChunkKv.name, KnobType::String, std::string("pool"), "",
       "a chunk's KV between engines: pool (a global KV cache, as Seer's Mooncake: the next chunk prefills nothing) or reprefill "
       "(prompt + tokens prefilled again)",
       base::one_of({"pool", "reprefill"})},
  };
  return {"seer",
          "Seer's global request pool and context-aware scheduling (arXiv 2511.14617) over sync or april",
          std::move(knobs),
          [](const base::Config& c) -> std::unique_ptr<Policy> {
            std::unique_ptr<Policy> inner = make_base_policy(c.get(keys::kSeerBase), c);
            const SeerScheduling s = c.get(keys::kSeerScheduling) == "fifo" ? SeerScheduling::Fifo : SeerScheduling::ContextAware;
            const auto chunk = static_cast<std::int32_t>(c.get(keys::kSeerChunkTok));
            return std::make_unique<SeerPolicy>(std::move(inner), s, chunk, c.get(keys::kSeerChunkKv) == "pool");
          },
          {"sync", "april"}};
}

}  // namespace april::policies
