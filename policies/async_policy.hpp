#pragma once
// AReaL-style asynchronous RL with bounded staleness (docs/design.md 3b), on a
// disaggregated cluster. Fresh groups are submitted in dataset order while
// the groups submitted so far are fewer than (v + eta + 1) x B, v being the
// engines' version (checked at the start, after every sync and after every
// completion), and, with async.max_inflight_groups > 0, while fewer than that
// many are in flight. Complete groups queue in completion order; whenever the
// trainer is idle and B are queued it trains the first B, then syncs. At a
// version change in-flight requests keep their KV (PipelineRL) or re-prefill
// (AReaL's interruptible generation), per async.on_update.
// With async.staleness_threshold >= 0 the bound is verl's fully-async
// rollouter's instead (fully_async_rollouter.py at b178a3cd,
// set_max_required_samples, update_param_version, _should_pause_generation):
// after each version change at most (1 + threshold) x B groups count for the
// version, those in flight or queued for training then included, and the
// fresh ones submitted since; a staleness in samples, a fraction of a batch.
// With async.local_steps L > 1 the trainer streams as verl's does
// (fully_async_trainer.py at b178a3cd: fit, _get_samples_from_queue,
// _trigger_parameter_sync_after_step): it trains each B / L groups as soon as
// they are queued, a local step with its own optimizer steps, and the weights
// sync after the L-th (trigger_parameter_sync_step = L, require_batches x
// ppo_mini_batch_size = B / L prompts).
// Our reading where the contract is silent: groups the filter rejects do not
// count as submitted (they yield no training data; counting them would stall
// the bound), and a long sample may outlive several versions: its staleness
// is reported, not capped.
#include "base/config.hpp"
#include "policies/policy.hpp"
#include "policies/registry.hpp"

namespace april::policies {

struct AsyncParams {
  std::int64_t eta = 1;                  // staleness bound, in versions
  std::int64_t max_inflight_groups = 0;  // 0 = no cap
  bool recompute = true;                 // async.on_update = recompute (AReaL) or keep_kv (PipelineRL)
  double staleness_threshold = -1;       // verl's, a fraction of B; < 0: eta bounds instead
  std::int64_t local_steps = 1;          // train calls per step, each on B / this groups as they queue
};

class AsyncPolicy final : public Policy {
 public:
  explicit AsyncPolicy(AsyncParams p) : p_(p) {}
  Decisions on_step_start(const RolloutView& view) override { return next(view); }
  Decisions on_group_accepted(const RolloutView& view, GroupId /*group*/) override { return next(view); }
  Decisions on_group_rejected(const RolloutView& view, GroupId /*group*/) override { return next(view); }
  Decisions on_train_end(const RolloutView& view) override;
  Decisions on_sync_end(const RolloutView& view) override;
  // Under elastic splits (policies/elastic_policy.hpp): the trainer is idle again.
  Decisions on_trainer_reclaimed(const RolloutView& view) override { return next(view); }
  [[nodiscard]] bool overlaps() const override { return true; }
  [[nodiscard]] bool recompute_on_update() const override { return p_.recompute; }
  [[nodiscard]] std::int64_t train_local_steps() const override { return p_.local_steps; }
  [[nodiscard]] std::int64_t resident_groups_bound(std::int64_t batch_size) const override;

 private:
  Decisions next(const RolloutView& view) const;
  AsyncParams p_;
  // Under verl's bound: the groups in flight or queued at the last version
  // change, and the groups submitted by then (fresh ones count from there).
  std::int64_t version_base_groups_ = 0;
  std::int64_t version_submitted_at_ = 0;
};

PolicyEntry async_policy_entry();

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::IntKey kAsyncEta{"async.eta"};
inline constexpr base::IntKey kAsyncMaxInflightGroups{"async.max_inflight_groups"};
inline constexpr base::StringKey kAsyncOnUpdate{"async.on_update"};
inline constexpr base::DoubleKey kAsyncStalenessThreshold{"async.staleness_threshold"};
inline constexpr base::IntKey kAsyncLocalSteps{"async.local_steps"};
}  // namespace keys

}  // namespace april::policies
