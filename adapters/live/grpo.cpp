#include "adapters/live/detail/grpo.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

namespace april::live {

GrpoOptions grpo_options(const LiveOptions& o) {
  GrpoOptions g;
  g.loss = policy_loss_from_name(o.policy_loss);
  g.clip_low = o.clip_low, g.clip_high = o.clip_high, g.kl_coef = o.kl_coef, g.tis_cap = o.tis_cap;
  g.mask_staleness_above = o.mask_staleness_above, g.lr = o.lr, g.weight_decay = o.weight_decay, g.grad_clip = o.grad_clip;
  g.temperature = o.temperature;
  g.recompute_old_logprobs = o.recompute_old_logprobs, g.tis_stale_only = o.tis_stale_only;
  return g;
}

TrainSampleData filler_sample(const std::vector<std::int32_t>& prompt, std::int32_t token, std::size_t response_tok, double reward,
                              std::int64_t group) {
  TrainSampleData s;
  s.prompt = prompt;
  s.response.assign(response_tok, token);
  s.rollout_logprobs.assign(response_tok, -1.0F);
  s.token_version.assign(response_tok, 0);
  s.reward = reward;
  s.group = group;
  return s;
}

std::vector<double> group_advantages(const std::vector<double>& rewards, const std::vector<std::int64_t>& groups) {
  std::map<std::int64_t, std::pair<double, double>> sums;  // group -> (sum, sum of squares)
  std::map<std::int64_t, double> counts;
  for (std::size_t i = 0; i < rewards.size(); ++i) {
    sums[groups[i]].first += rewards[i];
    sums[groups[i]].second += rewards[i] * rewards[i];
    counts[groups[i]] += 1;
  }
  std::vector<double> adv(rewards.size());
  for (std::size_t i = 0; i < rewards.size(); ++i) {
    const double n = counts[groups[i]];
    const double mean = sums[groups[i]].first / n;
    const double var = std::max(0.0, sums[groups[i]].second / n - mean * mean);
    adv[i] = (rewards[i] - mean) / (std::sqrt(var) + 1e-6);
  }
  return adv;
}

torch::Tensor ppo_clip_loss(const torch::Tensor& logp, const torch::Tensor& old_logp, const torch::Tensor& adv, const torch::Tensor& weight,
                            const torch::Tensor& mask, double clip_low, double clip_high) {
  const auto ratio = torch::exp(logp - old_logp);
  const auto unclipped = ratio * adv;
  const auto clipped = torch::clamp(ratio, 1.0 - clip_low, 1.0 + clip_high) * adv;
  const auto per_token = torch::min(unclipped, clipped) * weight * mask;
  return -per_token.sum() / mask.sum().clamp_min(1.0);
}

PolicyLoss policy_loss_from_name(const std::string& name) {
  if (name == "grpo") return PolicyLoss::Grpo;
  if (name == "dapo") return PolicyLoss::Dapo;
  if (name == "gspo") return PolicyLoss::Gspo;
  throw std::invalid_argument("policy loss '" + name + "': grpo, dapo or gspo");
}

torch::Tensor policy_loss(PolicyLoss kind, const torch::Tensor& logp, const torch::Tensor& old_logp, const torch::Tensor& adv,
                          const torch::Tensor& weight, const torch::Tensor& mask, double clip_low, double clip_high) {
  if (kind == PolicyLoss::Dapo) return ppo_clip_loss(logp, old_logp, adv, weight, mask, clip_low, clip_high);
  const auto tokens = mask.sum(1);  // [B]
  const auto sequences = (tokens > 0).to(mask.scalar_type()).sum().clamp_min(1.0);
  const auto per_row = tokens.clamp_min(1.0);
  if (kind == PolicyLoss::Grpo) {
    const auto ratio = torch::exp(logp - old_logp);
    const auto surrogate = torch::min(ratio * adv, torch::clamp(ratio, 1.0 - clip_low, 1.0 + clip_high) * adv) * weight * mask;
    return -(surrogate.sum(1) / per_row).sum() / sequences;
  }
  // GSPO: s_i = exp(mean_t(logp - old_logp)) over the sequence's tokens.
  const auto seq_ratio = torch::exp(((logp - old_logp) * mask).sum(1) / per_row);
  const auto seq_adv = (adv * mask).sum(1) / per_row;
  const auto surrogate = torch::min(seq_ratio * seq_adv, torch::clamp(seq_ratio, 1.0 - clip_low, 1.0 + clip_high) * seq_adv);
  return -(surrogate * (tokens > 0).to(mask.scalar_type())).sum() / sequences;
}

std::pair<torch::Tensor, torch::Tensor> response_logprobs(Transformer& model, const std::vector<TrainSampleData>& batch, double temperature,
                                                          const torch::Device& device) {
  std::int64_t t_max = 0, r_max = 0;
  for (const auto& s : batch) {
    t_max = std::max<std::int64_t>(t_max, static_cast<std::int64_t>(s.prompt.size() + s.response.size()));
    r_max = std::max<std::int64_t>(r_max, static_cast<std::int64_t>(s.response.size()));
  }
  const auto b = static_cast<std::int64_t>(batch.size());
  auto tokens = torch::zeros({b, t_max}, torch::kLong);
  auto gather_pos = torch::zeros({b, r_max}, torch::kLong);  // position whose logits predict response[j]
  auto targets = torch::zeros({b, r_max}, torch::kLong);
  auto mask = torch::zeros({b, r_max}, torch::kFloat32);
  auto tok = tokens.accessor<std::int64_t, 2>();
  auto gp = gather_pos.accessor<std::int64_t, 2>();
  auto tg = targets.accessor<std::int64_t, 2>();
  auto mk = mask.accessor<float, 2>();
  for (std::int64_t i = 0; i < b; ++i) {
    const auto& s = batch[static_cast<std::size_t>(i)];
    std::int64_t t = 0;
    for (auto x : s.prompt) tok[i][t++] = x;
    for (auto x : s.response) tok[i][t++] = x;
    const auto p = static_cast<std::int64_t>(s.prompt.size());
    for (std::int64_t j = 0; j < static_cast<std::int64_t>(s.response.size()); ++j) {
      gp[i][j] = p - 1 + j;
      tg[i][j] = s.response[static_cast<std::size_t>(j)];
      mk[i][j] = 1.0F;
    }
  }
  tokens = tokens.to(device);
  auto logits = model->forward(tokens);
  if (temperature > 0) logits = logits / temperature;
  const auto logp_all = torch::log_softmax(logits, -1);  // [B, T, V]
  const auto at_pos = logp_all.gather(1, gather_pos.to(device).unsqueeze(-1).expand({b, r_max, logp_all.size(2)}));
  const auto lp = at_pos.gather(2, targets.to(device).unsqueeze(-1)).squeeze(-1);
  return {lp * mask.to(device), mask.to(device)};
}

GrpoTrainer::GrpoTrainer(Transformer policy, std::optional<Transformer> reference, GrpoOptions options, torch::Device device)
    : policy_(std::move(policy)),
      reference_(std::move(reference)),
      opt_(options),
      device_(device),
      optimizer_(policy_->parameters(), torch::optim::AdamWOptions(options.lr).weight_decay(options.weight_decay)) {
  policy_->to(device_);
  if (reference_) {
    (*reference_)->to(device_);
    (*reference_)->eval();
  }
}

TrainStats GrpoTrainer::step(const std::vector<TrainSampleData>& batch, std::int64_t version) {
  TrainStats st;
  if (batch.empty()) return st;
  policy_->train();
  std::vector<double> rewards;
  std::vector<std::int64_t> groups;
  for (const auto& s : batch) {
    rewards.push_back(s.reward);
    groups.push_back(s.group);
    st.reward_mean += s.reward / static_cast<double>(batch.size());
    st.accuracy += (s.reward >= 1.0 ? 1.0 : 0.0) / static_cast<double>(batch.size());
  }
  const auto adv_v = group_advantages(rewards, groups);
  const auto [logp, mask] = response_logprobs(policy_, batch, opt_.temperature, device_);
  const auto b = logp.size(0), r = logp.size(1);
  auto rollout = torch::zeros({b, r}, torch::kFloat32);
  auto stale = torch::zeros({b, r}, torch::kFloat32);
  auto too_stale = torch::zeros({b, r}, torch::kFloat32);  // to mask: staler than the policy's cap
  auto adv = torch::zeros({b, r}, torch::kFloat32);
  {
    auto ro = rollout.accessor<float, 2>();
    auto sa = stale.accessor<float, 2>();
    auto ts = too_stale.accessor<float, 2>();
    auto ad = adv.accessor<float, 2>();
    for (std::int64_t i = 0; i < b; ++i) {
      const auto& s = batch[static_cast<std::size_t>(i)];
      for (std::int64_t j = 0; j < static_cast<std::int64_t>(s.response.size()); ++j) {
        ro[i][j] = s.rollout_logprobs[static_cast<std::size_t>(j)];
        const std::int64_t staleness = version - s.token_version[static_cast<std::size_t>(j)];
        sa[i][j] = staleness >= 1 ? 1.0F : 0.0F;
        ts[i][j] = opt_.mask_staleness_above >= 0 && staleness > opt_.mask_staleness_above ? 1.0F : 0.0F;
        ad[i][j] = static_cast<float>(adv_v[static_cast<std::size_t>(i)]);
      }
    }
  }
  rollout = rollout.to(device_);
  stale = stale.to(device_) * mask;
  adv = adv.to(device_);
  // Too-stale tokens keep their place in the context, with zero weight.
  const auto train_mask = mask * (1 - too_stale.to(device_));
  // pi_old. slime recomputes it with a forward pass of the trainer before the
  // update; with one update per step those are the weights of `logp`, so
  // that pass is `logp` itself, detached.
  torch::Tensor old_logp = opt_.recompute_old_logprobs ? logp.detach() : rollout;
  torch::Tensor weight = torch::ones_like(mask);
  if (opt_.tis_cap > 0) {
    torch::NoGradGuard no_grad;
    const auto tis = torch::clamp(torch::exp(old_logp - rollout), 0.0, opt_.tis_cap);
    weight = opt_.tis_stale_only ? torch::where(stale > 0, tis, torch::ones_like(mask)) : tis;
  }
  const auto ratio = torch::exp(logp - old_logp).detach();
  last_ratios_ = ratio.masked_select(mask > 0).cpu();
  last_old_logp_ = old_logp.masked_select(mask > 0).cpu();
  last_weights_ = weight.masked_select(mask > 0).cpu();
  auto loss = policy_loss(opt_.loss, logp, old_logp, adv, weight, train_mask, opt_.clip_low, opt_.clip_high);
  if (opt_.kl_coef > 0 && reference_) {
    torch::Tensor ref_logp;
    {
      torch::NoGradGuard no_grad;
      ref_logp = response_logprobs(*reference_, batch, opt_.temperature, device_).first;
    }
    const auto d = ref_logp - logp;
    const auto k3 = (torch::exp(d) - d - 1) * train_mask;
    const auto kl = k3.sum() / train_mask.sum().clamp_min(1.0);
    st.kl = kl.item<double>();
    loss = loss + opt_.kl_coef * kl;
  }
  optimizer_.zero_grad();
  loss.backward();
  st.grad_norm = torch::nn::utils::clip_grad_norm_(policy_->parameters(), opt_.grad_clip);
  optimizer_.step();
  const auto n_tok = mask.sum().item<double>();
  st.loss = loss.item<double>();
  st.tokens = static_cast<std::int64_t>(n_tok);
  st.masked_tokens = static_cast<std::int64_t>(n_tok - train_mask.sum().item<double>());
  st.ratio_mean = last_ratios_.numel() > 0 ? last_ratios_.mean().item<double>() : 1.0;
  const auto outside = ((ratio < 1.0 - opt_.clip_low) | (ratio > 1.0 + opt_.clip_high)).to(torch::kFloat32) * mask;
  st.clip_fraction = outside.sum().item<double>() / std::max(1.0, n_tok);
  policy_->eval();
  return st;
}

double GrpoTrainer::sft_step(const std::vector<std::pair<std::vector<std::int32_t>, std::vector<std::int32_t>>>& examples) {
  policy_->train();
  std::vector<TrainSampleData> batch;
  for (const auto& [p, a] : examples) {
    TrainSampleData s;
    s.prompt = p;
    s.response = a;
    batch.push_back(std::move(s));
  }
  const auto [logp, mask] = response_logprobs(policy_, batch, 1.0, device_);
  const auto loss = -(logp * mask).sum() / mask.sum().clamp_min(1.0);
  optimizer_.zero_grad();
  loss.backward();
  torch::nn::utils::clip_grad_norm_(policy_->parameters(), opt_.grad_clip);
  optimizer_.step();
  policy_->eval();
  return loss.item<double>();
}

}  // namespace april::live
