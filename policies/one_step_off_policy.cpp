#include "policies/one_step_off_policy.hpp"

#include <memory>

namespace april::policies {
namespace {

// The rollout in progress has made its batch.
bool rollout_done(const RolloutView& view) { return static_cast<std::int64_t>(view.accepted_groups().size()) >= view.batch_size(); }

// Train the ready batch and start the next rollout, at one instant.
Decisions train_and_roll(const RolloutView& view) {
  Decisions d;
  const auto& q = view.accepted_groups();
  d.train = std::vector<GroupId>(q.begin(), q.begin() + view.batch_size());
  d.fresh_groups = view.batch_size();
  return d;
}

}  // namespace

Decisions OneStepOffPolicy::on_step_start(const RolloutView& view) {
  Decisions d;
  d.fresh_groups = view.batch_size();  // batch 0, produced by version 0
  return d;
}

Decisions OneStepOffPolicy::on_group_accepted(const RolloutView& view, GroupId /*group*/) {
  if (!rollout_done(view)) return {};
  if (view.trained_steps() == 0 && view.trainer_idle()) return train_and_roll(view);  // batch 0 is ready
  Decisions d;
  // The rollout ended; the sync waits for the train step too.
  d.start_sync = view.trainer_idle() && view.trained_steps() > view.step();
  return d;
}

Decisions OneStepOffPolicy::on_group_rejected(const RolloutView& /*view*/, GroupId /*group*/) {
  Decisions d;
  d.fresh_groups = 1;
  return d;
}

Decisions OneStepOffPolicy::on_train_end(const RolloutView& view) {
  Decisions d;
  d.start_sync = rollout_done(view);
  return d;
}

Decisions OneStepOffPolicy::on_sync_end(const RolloutView& view) { return train_and_roll(view); }

PolicyEntry one_step_off_policy_entry() {
  return {"one_step_off",
          "verl's one-step off-policy (disaggregated): batch k+1 is rolled out with version k while batch k trains",
          {},
          [](const base::Config&) { return std::make_unique<OneStepOffPolicy>(); }};
}

}  // namespace april::policies
