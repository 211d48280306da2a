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
// Our reading where the contract is silent: groups the filter rejects do not
// count as submitted (they yield no training data; counting them would stall
// the bound), and a long sample may outlive several versions: its staleness
// is reported, not capped.
#include "policies/policy.hpp"
#include "policies/registry.hpp"
#include "base/config.hpp"

namespace april::policies {

struct AsyncParams {
  std::int64_t eta = 1;                  // staleness bound, in versions
  std::int64_t max_inflight_groups = 0;  // 0 = no cap
  bool recompute = true;                 // async.on_update = recompute (AReaL) or keep_kv (PipelineRL)
};

class AsyncPolicy final : public Policy {
 public:
  explicit AsyncPolicy(AsyncParams p) : p_(p) {}
  Decisions on_step_start(const RolloutView& view) override { return next(view); }
  Decisions on_group_accepted(const RolloutView& view, GroupId /*group*/) override { return next(view); }
  Decisions on_group_rejected(const RolloutView& view, GroupId /*group*/) override { return next(view); }
  Decisions on_train_end(const RolloutView& view) override;
  Decisions on_sync_end(const RolloutView& view) override { return next(view); }
  // Under elastic splits (policies/elastic_policy.hpp): the trainer is idle again.
  Decisions on_trainer_reclaimed(const RolloutView& view) override { return next(view); }
  [[nodiscard]] bool overlaps() const override { return true; }
  [[nodiscard]] bool recompute_on_update() const override { return p_.recompute; }
  [[nodiscard]] std::int64_t resident_groups_bound(std::int64_t batch_size) const override {
    return (p_.eta + 2) * batch_size;  // the staleness bound's window plus a batch queued for training
  }

 private:
  Decisions next(const RolloutView& view) const;
  AsyncParams p_;
};

PolicyEntry async_policy_entry();


// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::IntKey kAsyncEta{"async.eta"};
inline constexpr base::IntKey kAsyncMaxInflightGroups{"async.max_inflight_groups"};
inline constexpr base::StringKey kAsyncOnUpdate{"async.on_update"};
}  // namespace keys

}  // namespace april::policies
