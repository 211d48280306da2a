#pragma once
// GRPO with PPO-clip (private: torch). Advantages are group-normalised
// rewards; the clip range is asymmetric (DAPO: 0.2 low, 0.28 high); the loss
// is the mean over the batch's response tokens. Options: KL to a frozen
// reference (k3 estimator), masking of off-policy tokens, and truncated
// importance sampling (slime's --use-tis): token weight
// clamp(pi_old / pi_rollout, 0, C). pi_old, the PPO ratio's denominator, is
// by default recomputed by the trainer with the weights before the update
// (slime's default), or taken from the sampler's log-probs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/live/detail/transformer.hpp"
#include "adapters/live/live_options.hpp"
#include "adapters/live/weights_trainer.hpp"

namespace april::live {

// How the clipped surrogate is averaged, and over what ratio:
// - grpo: per sequence (its tokens' mean), then over sequences (Shao et al.
//   2024, DeepSeekMath eq. 3: 1/G sum_i 1/|o_i| sum_t);
// - dapo: over all tokens of the batch at once, so long answers weigh by
//   their length (Yu et al. 2025, DAPO eq. 8, "token-level policy gradient
//   loss");
// - gspo: one ratio per sequence, the geometric mean of its tokens' ratios
//   (exp of the mean log-ratio), clipped and multiplied by the sequence's
//   advantage, averaged over sequences (Zheng et al. 2025, GSPO eq. 5-7).
//   Its clip ranges are of another scale: the paper uses 3e-4 below and
//   4e-4 above (section 5.1).
enum class PolicyLoss { Grpo, Dapo, Gspo };
PolicyLoss policy_loss_from_name(const std::string& name);

struct GrpoOptions {
  PolicyLoss loss = PolicyLoss::Dapo;
  double clip_low = 0.2, clip_high = 0.28;
  double kl_coef = 0.0;
  double tis_cap = 0.0;         // 0: off
  bool tis_stale_only = false;  // the TIS weight on stale tokens only; fresh ones weigh 1
  // pi_old: true, the trainer's forward before the update (one update per
  // step, so the same weights as the loss's); false, the rollout log-probs.
  bool recompute_old_logprobs = true;
  // Tokens more than this many versions stale get zero weight; -1: none.
  std::int64_t mask_staleness_above = -1;
  double lr = 1e-3, weight_decay = 0.01, grad_clip = 1.0;
  double temperature = 1.0;  // the sampler's, so log-probs match
};

// The trainer's options from the live ones.
GrpoOptions grpo_options(const LiveOptions& options);

// A sample of `response_tok` copies of `token` after `prompt`, all sampled by
// version 0 with log-prob -1: the synthetic batches the profiler and the
// trainer benches and tests time a step on (content does not change its cost).
TrainSampleData filler_sample(const std::vector<std::int32_t>& prompt, std::int32_t token, std::size_t response_tok, double reward,
                              std::int64_t group);

struct TrainStats {
  double loss = 0, reward_mean = 0, accuracy = 0, clip_fraction = 0, kl = 0, grad_norm = 0, ratio_mean = 0;
  std::int64_t tokens = 0, masked_tokens = 0;
};

// (r - mean) / (std + 1e-6) within each group (population std).
std::vector<double> group_advantages(const std::vector<double>& rewards, const std::vector<std::int64_t>& groups);

// The clipped surrogate, averaged over tokens where mask = 1:
//   -sum(min(r * A, clip(r, 1 - low, 1 + high) * A) * w * mask) / sum(mask),  r = exp(logp - old_logp)
torch::Tensor ppo_clip_loss(const torch::Tensor& logp, const torch::Tensor& old_logp, const torch::Tensor& adv, const torch::Tensor& weight,
                            const torch::Tensor& mask, double clip_low, double clip_high);

// The surrogate of `kind` over [B, T] tensors (adv constant along each row;
// weight: per-token importance weights, which gspo does not take), negated
// for minimisation. Rows with no token where mask = 1 count for nothing.
torch::Tensor policy_loss(PolicyLoss kind, const torch::Tensor& logp, const torch::Tensor& old_logp, const torch::Tensor& adv,
                          const torch::Tensor& weight, const torch::Tensor& mask, double clip_low, double clip_high);

// Per-token log-probs of each response under `model` ([B, Tmax], padded with 0) and the mask of real tokens.
std::pair<torch::Tensor, torch::Tensor> response_logprobs(Transformer& model, const std::vector<TrainSampleData>& batch, double temperature,
                                                          const torch::Device& device);

class GrpoTrainer {
 public:
  GrpoTrainer(Transformer policy, std::optional<Transformer> reference, GrpoOptions options, torch::Device device);
  TrainStats step(const std::vector<TrainSampleData>& batch, std::int64_t version);
  // Supervised warm start on (prompt, answer) pairs: mean token cross-entropy.
  double sft_step(const std::vector<std::pair<std::vector<std::int32_t>, std::vector<std::int32_t>>>& examples);
  [[nodiscard]] Transformer& policy() { return policy_; }
  [[nodiscard]] torch::optim::AdamW& optimizer() { return optimizer_; }
  // Statistics of the last step() before the update, for tests: ratios of real tokens.
  [[nodiscard]] const torch::Tensor& last_ratios() const { return last_ratios_; }
  // Of the last step(), per real token in batch order: pi_old's log-probs and the TIS weights.
  [[nodiscard]] const torch::Tensor& last_old_logprobs() const { return last_old_logp_; }
  [[nodiscard]] const torch::Tensor& last_tis_weights() const { return last_weights_; }

 private:
  Transformer policy_;
  std::optional<Transformer> reference_;
  GrpoOptions opt_;
  torch::Device device_;
  torch::optim::AdamW optimizer_;
  torch::Tensor last_ratios_, last_old_logp_, last_weights_;
};

}  // namespace april::live
