#include "policies/laminar_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace april::policies {

std::int64_t LaminarPolicy::batch_groups() const {
  if (p_.engine_batch_groups > 0) return p_.engine_batch_groups;
  const auto e = static_cast<std::int64_t>(engines_.size());
  return (batch_size_ + e - 1) / e;
}

void LaminarPolicy::start_batch(std::int32_t engine, Decisions& d) {
  const std::int64_t n = batch_groups();
  d.fresh_groups += n;
  for (std::int64_t i = 0; i < n; ++i) unassigned_.push_back(engine);
  engines_[static_cast<std::size_t>(engine)].outstanding_groups = n;
}

void LaminarPolicy::train_if_ready(const RolloutView& view, Decisions& d) const {
  const auto& q = view.accepted_groups();
  if (d.train || !view.trainer_idle() || view.trained_steps() != view.step()) return;
  if (static_cast<std::int64_t>(q.size()) < batch_size_) return;
  d.train = std::vector<GroupId>(q.begin(), q.begin() + batch_size_);
}

void LaminarPolicy::next_for(const RolloutView& view, std::int32_t engine, Decisions& d) {
  EngineState& e = engines_[static_cast<std::size_t>(engine)];
  e.parked = false;
  if (e.version < view.step()) {
    e.pulling = true;
    d.pull.push_back(engine);
    return;
  }
  // What waits for the trainer, less what this instant's train step takes.
  auto queued = static_cast<std::int64_t>(view.accepted_groups().size()) + view.pending_complete_groups();
  if (d.train) queued -= static_cast<std::int64_t>(d.train->size());
  if (queued >= p_.max_queued_batches * batch_size_) {
    e.parked = true;
    return;
  }
  start_batch(engine, d);
}

Decisions LaminarPolicy::on_step_start(const RolloutView& view) {
  batch_size_ = view.batch_size();
  engines_.assign(static_cast<std::size_t>(view.engines()), EngineState{view.step(), 0, false, false});
  Decisions d;
  for (std::size_t e = 0; e < engines_.size(); ++e) start_batch(static_cast<std::int32_t>(e), d);
  return d;
}

Decisions LaminarPolicy::on_group_done(const RolloutView& view, GroupId group, bool accepted) {
  Decisions d;
  if (accepted) train_if_ready(view, d);
  const auto it = group_engine_.find(group);
  if (it == group_engine_.end()) throw std::logic_error(fmt::format("laminar: group {} was never assigned an engine", group));
  const std::int32_t engine = it->second;
  group_engine_.erase(it);
  if (--engines_[static_cast<std::size_t>(engine)].outstanding_groups == 0) next_for(view, engine, d);
  return d;
}

Decisions LaminarPolicy::on_group_accepted(const RolloutView& view, GroupId group) { return on_group_done(view, group, true); }
Decisions LaminarPolicy::on_group_rejected(const RolloutView& view, GroupId group) { return on_group_done(view, group, false); }

Decisions LaminarPolicy::on_train_end(const RolloutView& view) {
  Decisions d;
  d.start_sync = true;
  // The train step took its groups off the queue: parked engines may go on.
  for (std::size_t e = 0; e < engines_.size(); ++e) {
    if (engines_[e].parked) next_for(view, static_cast<std::int32_t>(e), d);
  }
  return d;
}

Decisions LaminarPolicy::on_sync_end(const RolloutView& view) {
  Decisions d;
  train_if_ready(view, d);
  repack(view, d);
  for (std::size_t e = 0; e < engines_.size(); ++e) {
    if (engines_[e].parked) next_for(view, static_cast<std::int32_t>(e), d);
  }
  return d;
}

void LaminarPolicy::repack(const RolloutView& view, Decisions& d) {
  const std::int64_t below = p_.repack_below_requests;
  if (below <= 0 || engines_.size() < 2) return;
  // An engine's requests all run when they fit its cap on running requests.
  const std::int64_t cap = view.engine_slots() > 0 ? view.engine_slots() / static_cast<std::int64_t>(engines_.size()) : below;
  const std::int64_t limit = std::min(below, cap);
  // No pair fits when the two smallest loads do not (loads only grow as
  // engines merge): the usual case while every engine drains, and asked at
  // each completion, so it returns before the pairing's quadratic search.
  std::int64_t least = limit + 1, second = limit + 1;
  for (const EngineState& s : engines_) {
    if (s.pulling || s.parked || s.unfinished_samples <= 0 || s.unfinished_samples >= below || s.unfinished_samples > cap) continue;
    if (s.unfinished_samples < least) {
      second = least;
      least = s.unfinished_samples;
    } else if (s.unfinished_samples < second) {
      second = s.unfinished_samples;
    }
  }
  if (least + second > limit) return;
  std::vector<std::int32_t> candidates;
  for (std::size_t e = 0; e < engines_.size(); ++e) {
    const EngineState& s = engines_[e];
    if (s.pulling || s.parked || s.unfinished_samples <= 0) continue;
    if (s.unfinished_samples < below && s.unfinished_samples <= cap) candidates.push_back(static_cast<std::int32_t>(e));
  }
  if (candidates.size() < 2) return;
  // Smallest first (ties by index): the least work released first.
  std::stable_sort(candidates.begin(), candidates.end(), [&](std::int32_t a, std::int32_t b) {
    return engines_[static_cast<std::size_t>(a)].unfinished_samples < engines_[static_cast<std::size_t>(b)].unfinished_samples;
  });
  std::vector<std::int64_t> load(engines_.size(), 0);
  std::vector<char> source(engines_.size(), 0), destination(engines_.size(), 0);
  for (const std::int32_t e : candidates) load[static_cast<std::size_t>(e)] = engines_[static_cast<std::size_t>(e)].unfinished_samples;
  std::vector<std::pair<std::int32_t, std::int32_t>> moves;
  for (const std::int32_t s : candidates) {
    const auto si = static_cast<std::size_t>(s);
    if (destination[si] != 0) continue;
    std::int32_t best = -1;
    for (const std::int32_t t : candidates) {
      const auto ti = static_cast<std::size_t>(t);
      if (t == s || source[ti] != 0 || engines_[ti].version != engines_[si].version) continue;
      if (load[ti] + load[si] > limit) continue;
      if (best < 0 || load[ti] > load[static_cast<std::size_t>(best)]) best = t;
    }
    if (best < 0) continue;
    load[static_cast<std::size_t>(best)] += load[si];
    source[si] = 1;
    destination[static_cast<std::size_t>(best)] = 1;
    moves.emplace_back(s, best);
  }
  for (const auto& [from, to] : moves) {
    EngineState& f = engines_[static_cast<std::size_t>(from)];
    EngineState& t = engines_[static_cast<std::size_t>(to)];
    for (auto& [group, engine] : group_engine_) {
      if (engine == from) engine = to;
    }
    t.outstanding_groups += f.outstanding_groups;
    t.unfinished_samples += f.unfinished_samples;
    f.outstanding_groups = f.unfinished_samples = 0;
    d.move_requests.emplace_back(from, to);
    next_for(view, from, d);
  }
}

Decisions LaminarPolicy::on_samples_finished(const RolloutView& view, const std::vector<SampleRef>& finished,
                                             const std::vector<SampleRef>& /*chunk_ended*/) {
  bool below = false;
  for (const SampleRef& s : finished) {
    const auto it = group_engine_.find(s.group);
    if (it == group_engine_.end()) continue;
    EngineState& e = engines_[static_cast<std::size_t>(it->second)];
    --e.unfinished_samples;
    below = below || (e.unfinished_samples > 0 && e.unfinished_samples < p_.repack_below_requests);
  }
  Decisions d;
  if (below) repack(view, d);
  return d;
}

Decisions LaminarPolicy::on_engines_pulled(const RolloutView& view, const std::vector<std::int32_t>& engines) {
  Decisions d;
  for (const std::int32_t engine : engines) {
    EngineState& e = engines_.at(static_cast<std::size_t>(engine));
    e.pulling = false;
    e.version = view.step();
    next_for(view, engine, d);
  }
  return d;
}

SubmissionPlan LaminarPolicy::plan_submissions(const RolloutView& /*view*/, const std::vector<Submission>& submissions) {
  SubmissionPlan plan;
  plan.engines.reserve(submissions.size());
  for (const Submission& s : submissions) {
    auto it = group_engine_.find(s.group);
    if (it == group_engine_.end()) {
      if (unassigned_.empty()) throw std::logic_error(fmt::format("laminar: group {} submitted without an engine", s.group));
      it = group_engine_.emplace(s.group, unassigned_.front()).first;
      unassigned_.pop_front();
    }
    plan.engines.push_back(EngineRange{it->second, 1});
    ++engines_[static_cast<std::size_t>(it->second)].unfinished_samples;
  }
  return plan;
}

PolicyEntry laminar_policy_entry() {
  using base::Knob;
  using base::KnobType;
  std::vector<Knob> knobs = {
      {keys::kLaminarEngineBatchGroups.name, KnobType::Int, std::int64_t{0}, "groups",
       "groups each engine generates per batch, all with the version it holds (0: B / engines, rounded up)", base::in_range(0, 1 << 24)},
      {keys::kLaminarMaxQueuedBatches.name, KnobType::Int, std::int64_t{2}, "batches",
       "an engine whose batch is done starts the next only while fewer than this many x B complete groups wait for the "
       "trainer (the paper bounds none; an unbounded buffer is not run)",
       base::in_range(1, 1 << 20)},
      {keys::kLaminarRepackBelowRequests.name, KnobType::Int, std::int64_t{64}, "requests",
       "repack: engines of one version whose requests all run and number fewer than this (the paper's roofline batch: a "
       "decode batch of 64 costs about what one under 8 does, its Figure 4) move whole to the fullest that stays under it; "
       "0: no repack",
       base::in_range(0, 1 << 24)},
  };
  return {"laminar",
          "Laminar's trajectory-level asynchrony (arXiv 2510.12633, disaggregated, simulator): per-engine batches, weights "
          "published to relays and pulled by each engine between its batches",
          std::move(knobs), [](const base::Config& c) {
            LaminarParams p;
            p.engine_batch_groups = c.get(keys::kLaminarEngineBatchGroups);
            p.max_queued_batches = c.get(keys::kLaminarMaxQueuedBatches);
            p.repack_below_requests = c.get(keys::kLaminarRepackBelowRequests);
            return std::make_unique<LaminarPolicy>(p);
          }};
}

}  // namespace april::policies
