#include "policies/async_policy.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "base/run_keys.hpp"

namespace april::policies {

Decisions AsyncPolicy::next(const RolloutView& view) const {
  Decisions d;
  const std::int64_t b = view.batch_size();
  std::int64_t room = (view.step() + p_.eta + 1) * b - view.groups_submitted_unrejected();
  if (p_.staleness_threshold >= 0) {
    // verl: int(required_samples x (threshold + 1) x trigger_parameter_sync_step), B being the last two's product.
    const auto bound = static_cast<std::int64_t>((p_.staleness_threshold + 1.0) * static_cast<double>(b));
    room = bound - version_base_groups_ - (view.groups_submitted_unrejected() - version_submitted_at_);
  }
  if (p_.max_inflight_groups > 0) room = std::min(room, p_.max_inflight_groups - view.in_flight_groups());
  d.fresh_groups = std::max<std::int64_t>(0, room);
  const auto& q = view.accepted_groups();
  // The step's next local step (all of B when local_steps is 1): the trainer
  // has not started the step's last while trained_steps() == step().
  const std::int64_t part = b / p_.local_steps;
  if (view.trainer_idle() && view.trained_steps() == view.step() && static_cast<std::int64_t>(q.size()) >= part) {
    d.train = std::vector<GroupId>(q.begin(), q.begin() + part);
  }
  return d;
}

Decisions AsyncPolicy::on_sync_end(const RolloutView& view) {
  // verl resets its count at each version change to the groups still running, aborted to resume, or queued.
  version_base_groups_ = view.in_flight_groups() + static_cast<std::int64_t>(view.accepted_groups().size());
  version_submitted_at_ = view.groups_submitted_unrejected();
  return next(view);
}

std::int64_t AsyncPolicy::resident_groups_bound(std::int64_t batch_size) const {
  if (p_.staleness_threshold < 0) return (p_.eta + 2) * batch_size;  // the staleness bound's window plus a batch queued for training
  // At most (1 + threshold) x B counted since a version change, and a batch queued or training besides.
  return static_cast<std::int64_t>(std::ceil((p_.staleness_threshold + 1.0) * static_cast<double>(batch_size))) + 2 * batch_size;
}

Decisions AsyncPolicy::on_train_end(const RolloutView& view) {
  // A local step short of the step's last: the next one starts when its groups are queued.
  if (view.trained_steps() == view.step()) return next(view);
  Decisions d;
  d.start_sync = true;
  return d;
}

PolicyEntry async_policy_entry() {
  using base::Knob;
  using base::KnobType;
  std::vector<Knob> knobs = {
      {keys::kAsyncEta.name, KnobType::Int, std::int64_t{1}, "versions",
       "staleness bound: submit while groups submitted < (engine version + eta + 1) x B; 0 = sync on a disaggregated cluster",
       base::in_range(0, 1 << 20)},
      {keys::kAsyncMaxInflightGroups.name, KnobType::Int, std::int64_t{0}, "groups", "cap on groups in flight; 0 = no cap",
       base::in_range(0, 1 << 30)},
      {keys::kAsyncOnUpdate.name, KnobType::String, std::string("recompute"), "",
       "in-flight requests at a version change: recompute (drop KV, re-prefill prompt + tokens; AReaL) or keep_kv "
       "(go on with their KV cache; PipelineRL)",
       base::one_of({"recompute", "keep_kv"})},
      {keys::kAsyncStalenessThreshold.name, KnobType::Double, -1.0, "x B",
       "verl's staleness_threshold (fully-async recipe): after each sync at most (1 + this) x B groups count for the version, "
       "those in flight or queued then included; < 0 = off (async.eta bounds instead)",
       base::in_range(-1.0, 1e6)},
      {keys::kAsyncLocalSteps.name, KnobType::Int, std::int64_t{1}, "calls",
       "verl's trigger_parameter_sync_step (fully-async recipe): each step's batch trains in this many local steps of "
       "B / this groups (require_batches x ppo_mini_batch_size prompts), each started as soon as its groups are queued, "
       "the weights synced after the last; must divide rollout_batch_size and train.ppo_mini_batches",
       base::in_range(1, 1 << 20)},
  };
  return {"async", "AReaL-style asynchronous RL (disaggregated): bounded staleness eta, train whenever B groups are ready",
          std::move(knobs), [](const base::Config& c) {
            AsyncParams p;
            p.eta = c.get(policies::keys::kAsyncEta);
            p.max_inflight_groups = c.get(policies::keys::kAsyncMaxInflightGroups);
            p.recompute = c.get(policies::keys::kAsyncOnUpdate) == "recompute";
            p.staleness_threshold = c.get(policies::keys::kAsyncStalenessThreshold);
            p.local_steps = c.get(policies::keys::kAsyncLocalSteps);
            const std::int64_t b = c.get(base::keys::kRolloutBatchSize);
            if (b % p.local_steps != 0) {
              throw base::ConfigError(
                  fmt::format("key 'async.local_steps': {} does not divide rollout_batch_size {}: each local step "
                              "trains an equal share of the batch",
                              p.local_steps, b));
            }
            return std::make_unique<AsyncPolicy>(p);
          }};
}

}  // namespace april::policies
