#include "policies/sync_policy.hpp"

#include "policies/policy_helpers.hpp"

namespace april::policies {

Decisions SyncPolicy::on_step_start(const RolloutView& view) {
  // Only sync.filter_refill=missing leaves groups in the buffer; they start over.
  Decisions d = take_from_buffer_fifo(view, view.batch_size(), -1, /*restart_all=*/true);
  d.fresh_groups = view.batch_size() - static_cast<std::int64_t>(d.take_from_buffer.size());
  return d;
}

Decisions SyncPolicy::on_group_accepted(const RolloutView& view, GroupId group) {
  Decisions d = FirstCompleteBatchPolicy::on_group_accepted(view, group);
  d.drop_unbatched = refill_ == SyncRefill::Wave;
  return d;
}

Decisions SyncPolicy::on_group_rejected(const RolloutView& view, GroupId group) {
  if (refill_ == SyncRefill::Missing) return FirstCompleteBatchPolicy::on_group_rejected(view, group);
  Decisions d;
  if (shortfall(view) > 0) d.fresh_groups = view.batch_size();  // slime: a whole wave of B
  return d;
}

PolicyEntry sync_policy_entry() {
  using base::Knob;
  using base::KnobType;
  std::vector<Knob> knobs = {
      {keys::kSyncFilterRefill.name, KnobType::String, std::string("wave"), "",
       "when the filter leaves fewer than B candidates: wave = submit another B fresh groups and drop the groups "
       "still in flight at the batch (slime); missing = submit only the missing number, regenerate leftovers next step",
       base::one_of({"wave", "missing"})},
  };
  return {
      "sync", "synchronous: submit B groups, wait for all of them (the baseline)", std::move(knobs), [](const base::Config& c) {
        return std::make_unique<SyncPolicy>(c.get(policies::keys::kSyncFilterRefill) == "missing" ? SyncRefill::Missing : SyncRefill::Wave);
      }};
}

}  // namespace april::policies
