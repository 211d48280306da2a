#pragma once
// StreamRL's skewness-aware dispatch (Zhong et al., "StreamRL: Scalable,
// Heterogeneous, and Elastic RL for LLMs with Disaggregated Stream
// Generation", arXiv 2504.15930, section 5) on top of another policy
// (`streamrl.base`), which decides what to submit, when the batch is
// complete and what to train.
//
// StreamRL ranks a batch's prompts by the output length a small fine-tuned
// model predicts, marks the longest k% as the long tail (k = 20 "works well
// in practice", section 5.3), sends the tail to a few dedicated instances
// (small batches: the fastest tokens) and the rest to the others (large
// batches: the most tokens per GPU), and inside each instance runs the
// longest predicted first (LPT). This policy does the same per dispatch:
//  - each submission's predicted length (`streamrl.predictor`): `perfect`
//    (the workload's own length: an oracle, simulator only), `noisy` (that
//    length times exp(sigma Z), Z a standard normal drawn per sample from
//    `seed`: a ranker of stated accuracy), `history` (what a real system can
//    learn: the lengths each prompt produced before and its finished
//    siblings, policies/length_predictor.hpp), or `none` (the base alone);
//  - the tail: the dispatch's longest `streamrl.tail_fraction`, by rank. A
//    dispatch at least half the largest one seen sets it; smaller ones (a
//    refill of one group) send to the tail what is predicted longer than
//    the longest sample that dispatch kept out of it;
//  - the pools: engines [0, N_lt) take the tail, the others the rest.
//    N_lt = `streamrl.tail_engines`, or (0) the tail's share of the
//    predicted tokens times the engines, at least 1, at most all but one;
//  - inside a pool, longest predicted first to the engine with the least
//    predicted work outstanding: LPT over the instances, and the engines'
//    own queues then admit longest first.
//
// Where this is a simplification of the paper, said here once:
//  - The paper picks N_lt by enumerating the splits against a profiled
//    per-token latency T_ptl(batch size) (its Algorithm 2); this balances
//    predicted tokens instead, a rule that needs no profile. A sweep over
//    `streamrl.tail_engines` (april plan --tail-engines) is the paper's search.
//  - Stream generation (the trainer consuming samples as they finish,
//    section 4) needs a trainer that steps by micro-batch: not modelled. Its
//    asynchronous variant is `streamrl.base=one_step_off`.
//  - The paper's ranker predicts per prompt and recalls 87% of the longest
//    20% (its Table 4); `noisy` errs per sample, and its default sigma, 0.2,
//    recalls 88% on the default workload (tests/policies/streamrl_test.cpp;
//    docs/policies.md gives other sigmas).
//  - Live: one engine, so no pools, only the order and predictions. Over
//    HTTP the pools are ranges of servers (tests/cli/serve_check.py).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/config.hpp"
#include "policies/policy.hpp"
#include "policies/policy_decorator.hpp"
#include "policies/registry.hpp"
#include "policies/view_length_predictor.hpp"

namespace april::policies {

enum class StreamRlPredictor { Perfect, Noisy, History, None };

struct StreamRlParams {
  StreamRlPredictor predictor = StreamRlPredictor::Noisy;
  double noise_sigma = 0.2;
  std::uint64_t seed = 1;
  double tail_fraction = 0.2;
  std::int64_t tail_engines = 0;  // 0: by the tail's share of predicted tokens
  std::size_t history_per_prompt = 16;
};

class StreamRlPolicy final : public PolicyDecorator {
 public:
  StreamRlPolicy(std::unique_ptr<Policy> base, StreamRlParams p);

  Decisions on_group_accepted(const RolloutView& view, GroupId group) override;
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override;
  SubmissionPlan plan_submissions(const RolloutView& view, const std::vector<Submission>& submissions) override;

  // The noisy predictor's factor for one sample, exp(sigma Z): a pure
  // function of (seed, group, sample), so resumed and repeated runs agree.
  [[nodiscard]] static double noise_factor(std::uint64_t seed, GroupId group, std::int32_t sample, double sigma);
  // The bar a later dispatch's tail must pass (longer than it) and the tail
  // engines now in force (-1 and 0 before the first dispatch).
  [[nodiscard]] std::int64_t tail_threshold_tok() const { return threshold_tok_; }
  [[nodiscard]] std::int64_t tail_engines_now() const { return tail_engines_now_; }

 private:
  // Predicted total lengths, > generated_tok each; 0 where none.
  std::vector<std::int64_t> predict(const RolloutView& view, const std::vector<Submission>& subs) const;
  void learn(const RolloutView& view, GroupId group);

  StreamRlParams p_;
  ViewLengthPredictor history_;
  std::int64_t threshold_tok_ = -1, tail_engines_now_ = 0;
  std::size_t largest_dispatch_ = 0;
};

PolicyEntry streamrl_policy_entry();

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::StringKey kStreamRlBase{"streamrl.base"};
inline constexpr base::StringKey kStreamRlPredictor{"streamrl.predictor"};
inline constexpr base::DoubleKey kStreamRlNoiseSigma{"streamrl.noise_sigma"};
inline constexpr base::DoubleKey kStreamRlTailFraction{"streamrl.tail_fraction"};
inline constexpr base::IntKey kStreamRlTailEngines{"streamrl.tail_engines"};
}  // namespace keys

}  // namespace april::policies
