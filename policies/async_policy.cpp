#include "policies/async_policy.hpp"

#include <algorithm>
#include <memory>

namespace april::policies {

Decisions AsyncPolicy::next(const RolloutView& view) const {
  Decisions d;
  const std::int64_t b = view.batch_size();
  std::int64_t room = (view.step() + p_.eta + 1) * b - view.groups_submitted_unrejected();
  if (p_.max_inflight_groups > 0) room = std::min(room, p_.max_inflight_groups - view.in_flight_groups());
  d.fresh_groups = std::max<std::int64_t>(0, room);
  const auto& q = view.accepted_groups();
  if (view.trainer_idle() && view.trained_steps() == view.step() && static_cast<std::int64_t>(q.size()) >= b) {
    d.train = std::vector<GroupId>(q.begin(), q.begin() + b);
  }
  return d;
}

Decisions AsyncPolicy::on_train_end(const RolloutView& /*view*/) {
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
  };
  return {"async", "AReaL-style asynchronous RL (disaggregated): bounded staleness eta, train whenever B groups are ready",
          std::move(knobs), [](const base::Config& c) {
            AsyncParams p;
            p.eta = c.get(policies::keys::kAsyncEta);
            p.max_inflight_groups = c.get(policies::keys::kAsyncMaxInflightGroups);
            p.recompute = c.get(policies::keys::kAsyncOnUpdate) == "recompute";
            return std::make_unique<AsyncPolicy>(p);
          }};
}

}  // namespace april::policies
