#pragma once
// Tail batching, after RollPacker (docs/design.md section 4: tail batching). Our
// reading of its mechanism, one assumption per line:
//  1. A short round submits B' = ceil(alpha x B) fresh groups
//     (tail_batching.alpha) and trains on the first B to complete; the rest,
//     the prompts whose responses run long, are aborted and set aside.
//  2. Once B prompts are set aside, the next step is a long round: exactly
//     those B (oldest first), nothing fresh, and it trains on all of them.
//     Long prompts are thereby batched with each other instead of holding up
//     a round of short ones (lengths of one prompt's samples are correlated).
//  3. A set-aside prompt starts over in its long round
//     (tail_batching.resume=restart, the default): every trained token comes
//     from the version being trained, as in synchronous RL, and the tokens
//     its short round decoded are wasted. resume=keep continues them
//     instead (APRIL-style, off-policy, nothing wasted).
//  4. The data order changes: a long prompt trains some steps after the
//     short prompts drawn with it.
//  5. A filter rejection is replaced by fresh groups, as in the other policies
//     (in a long round too, so that it can still fill its batch).
#include <cstdint>

#include "base/config.hpp"
#include "policies/policy_helpers.hpp"
#include "policies/registry.hpp"

namespace april::policies {

struct TailBatchingParams {
  std::int64_t over_sampling_batch_size = 0;  // B' of a short round
  bool restart = true;                        // resume=restart
};

class TailBatchingPolicy final : public FirstCompleteBatchPolicy {
 public:
  explicit TailBatchingPolicy(TailBatchingParams p) : p_(p) {}
  Decisions on_step_start(const RolloutView& view) override;
  [[nodiscard]] std::int64_t resident_groups_bound(std::int64_t batch_size) const override {
    // A short round runs only while fewer than B are set aside: its B' in
    // flight plus at most B - 1 waiting. A long round holds fewer.
    return p_.over_sampling_batch_size + batch_size - 1;
  }

 private:
  TailBatchingParams p_;
};

PolicyEntry tail_batching_policy_entry();

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::DoubleKey kTailBatchingAlpha{"tail_batching.alpha"};
inline constexpr base::StringKey kTailBatchingResume{"tail_batching.resume"};
}  // namespace keys

}  // namespace april::policies
