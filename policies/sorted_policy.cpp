#include "policies/sorted_policy.hpp"

#include <algorithm>

#include "policies/policy_helpers.hpp"

namespace april::policies {

Decisions SortedPolicy::on_step_start(const RolloutView& view) {
  if (view.buffer().empty()) {
    Decisions d;
    d.fresh_groups = p_.updates_per_rollout * view.batch_size();  // a new round
    return d;
  }
  Decisions d = take_from_buffer_fifo(view, static_cast<std::int64_t>(view.buffer().size()), p_.max_staleness);
  d.fresh_groups = std::max<std::int64_t>(0, view.batch_size() - static_cast<std::int64_t>(d.take_from_buffer.size()));
  return d;
}

PolicyEntry sorted_policy_entry() {
  using base::Knob;
  using base::KnobType;
  std::vector<Knob> knobs = {
      {keys::kSortedUpdatesPerRollout.name, KnobType::Int, std::int64_t{4}, "",
       "k: one rollout round of k * B groups feeds k updates, shortest first", base::in_range(1, 4096)},
      {keys::kSortedMaxStaleness.name, KnobType::Int, std::int64_t{-1}, "versions",
       "a buffered group older than this restarts from scratch; -1 = only the round's own bound (k - 1)", base::at_least(-1)},
  };
  return {"sorted", "SortedRL-style: a k*B round feeds k updates in completion order (short first)", std::move(knobs),
          [](const base::Config& c) {
            return std::make_unique<SortedPolicy>(
                SortedParams{c.get(policies::keys::kSortedUpdatesPerRollout), c.get(policies::keys::kSortedMaxStaleness)});
          }};
}

}  // namespace april::policies
