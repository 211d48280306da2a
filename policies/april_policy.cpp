#include "policies/april_policy.hpp"

#include <fmt/format.h>

#include <cmath>

#include "base/run_keys.hpp"
#include "policies/policy_helpers.hpp"

namespace april::policies {

Decisions AprilPolicy::wave(const RolloutView& view) const {
  Decisions d = take_from_buffer_fifo(view, p_.over_sampling_batch_size, p_.max_staleness);
  d.fresh_groups = p_.over_sampling_batch_size - static_cast<std::int64_t>(d.take_from_buffer.size());
  return d;
}

Decisions AprilPolicy::on_step_start(const RolloutView& view) { return wave(view); }

Decisions AprilPolicy::on_group_rejected(const RolloutView& view, GroupId /*group*/) {
  // The filter left too few candidates: submit another wave of B'.
  if (shortfall(view) > 0) return wave(view);
  return {};
}

namespace {
// B' at most 2^30 groups: far past any cluster, and far from overflowing.
constexpr std::int64_t kMaxOverSampling = std::int64_t{1} << 30;
}  // namespace

PolicyEntry april_policy_entry() {
  using base::Knob;
  using base::KnobType;
  std::vector<Knob> knobs = {
      {keys::kAprilAlpha.name, KnobType::Double, 2.0, "", "over-provisioning factor: B' = ceil(alpha * B)",
       base::in_range(1.0, static_cast<double>(kMaxOverSampling))},
      {keys::kAprilOverSamplingBatchSize.name, KnobType::Int, std::int64_t{0}, "groups",
       "B' directly (slime's over_sampling_batch_size); 0 = from april.alpha", base::in_range(0, kMaxOverSampling)},
      {keys::kAprilMaxStaleness.name, KnobType::Int, std::int64_t{-1}, "versions",
       "a buffered group older than this restarts from scratch; -1 = no cap (the paper)", base::at_least(-1)},
      {keys::kAprilMaskOffpolicy.name, KnobType::Bool, false, "", "give off-policy tokens zero weight in the loss (counted as masked)", {}},
      {keys::kAprilMaxTokenStaleness.name, KnobType::Int, std::int64_t{-1}, "versions",
       "per token: tokens more than this many versions stale get zero weight in the loss (masked), the rest of their group "
       "trains; -1 = no cap",
       base::at_least(-1)},
  };
  return {"april", "Active Partial Rollouts: over-provision B' groups, abort once B complete, resume partials first", std::move(knobs),
          [](const base::Config& c) {
            AprilParams p;
            const std::int64_t b = c.get(base::keys::kRolloutBatchSize);
            p.over_sampling_batch_size = c.get(policies::keys::kAprilOverSamplingBatchSize);
            if (p.over_sampling_batch_size == 0) {
              // In double first: a huge alpha must be an error naming it, not an overflowed B'.
              const double alpha = c.get(policies::keys::kAprilAlpha);
              const double b_prime = std::ceil(alpha * static_cast<double>(b) - 1e-9);
              if (!(b_prime <= static_cast<double>(kMaxOverSampling))) {
                throw base::ConfigError(
                    fmt::format("key 'april.alpha': {} x rollout_batch_size {} asks for {:.3g} groups per step, more "
                                "than {}",
                                alpha, b, b_prime, kMaxOverSampling));
              }
              p.over_sampling_batch_size = over_sampling_groups(alpha, b);
            }
            if (p.over_sampling_batch_size < b) {
              throw base::ConfigError(fmt::format("key 'april.over_sampling_batch_size': B' = {} is smaller than rollout_batch_size = {}",
                                                  p.over_sampling_batch_size, b));
            }
            p.max_staleness = c.get(policies::keys::kAprilMaxStaleness);
            // mask_offpolicy masks every token of an older version: a cap of 0.
            p.max_token_staleness = c.get(policies::keys::kAprilMaskOffpolicy) ? 0 : c.get(policies::keys::kAprilMaxTokenStaleness);
            return std::make_unique<AprilPolicy>(p);
          }};
}

}  // namespace april::policies
