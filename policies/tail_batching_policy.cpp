#include "policies/tail_batching_policy.hpp"

#include "base/run_keys.hpp"

namespace april::policies {

Decisions TailBatchingPolicy::on_step_start(const RolloutView& view) {
  const std::int64_t b = view.batch_size();
  if (static_cast<std::int64_t>(view.buffer().size()) >= b) {
    // A long round: the B oldest set-aside prompts, nothing fresh.
    return take_from_buffer_fifo(view, b, /*max_staleness=*/-1, /*restart_all=*/p_.restart);
  }
  // A short round: fresh groups only; what it sets aside waits for a long round.
  Decisions d;
  d.fresh_groups = p_.over_sampling_batch_size;
  return d;
}

PolicyEntry tail_batching_policy_entry() {
  using base::Knob;
  using base::KnobType;
  constexpr double kMaxAlpha = 1024.0;
  std::vector<Knob> knobs = {
      {keys::kTailBatchingAlpha.name, KnobType::Double, 1.25, "",
       "short rounds submit B' = ceil(alpha * B) fresh groups and train on the first B to complete", base::in_range(1.0, kMaxAlpha)},
      {keys::kTailBatchingResume.name, KnobType::String, std::string("restart"), "",
       "a set-aside prompt in its long round: restart (from scratch, on-policy; RollPacker) or keep (continue its tokens, "
       "off-policy)",
       base::one_of({"restart", "keep"})},
  };
  return {"tail_batching",
          "RollPacker-style tail batching: short rounds train on the first B of B' and set the rest aside; every B set-aside "
          "prompts form a long round of their own",
          std::move(knobs), [](const base::Config& c) {
            TailBatchingParams p;
            const std::int64_t b = c.get(base::keys::kRolloutBatchSize);
            const double alpha = c.get(policies::keys::kTailBatchingAlpha);
            p.over_sampling_batch_size = over_sampling_groups(alpha, b);
            p.restart = c.get(policies::keys::kTailBatchingResume) == "restart";
            return std::make_unique<TailBatchingPolicy>(p);
          }};
}

}  // namespace april::policies
