// The GRPO trainer: the loss by hand, masking of stale tokens, the PPO ratio.
// The tiny model, on CPU or on the device APRIL_LIVE_DEVICE names.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <set>
#include <tuple>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/decode_graph.hpp"
#include "adapters/live/detail/device.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "adapters/live/live_backend.hpp"
#include "adapters/live/profiler.hpp"
#include "base/atomic_file.hpp"
#include "base/hash.hpp"
#include "policies/april_policy.hpp"
#include "rl/rl_loop.hpp"
#include "scenario/simulation.hpp"
#include "studies/live_validation.hpp"
#include "studies/machine_drift.hpp"
#include "tasks/countdown_task.hpp"
#include "test_support.hpp"
#include "traces/trace_workload.hpp"

#include "live_support.hpp"

namespace april::live {
namespace {

using namespace april::live::testing;

TEST(Grpo, LossAndGradientOnAHandComputedExample) {
  // Two tokens, A = +1 and A = -1; ratios e^0.1 (inside the clip range for
  // A > 0) and e^0.5 (clipped at 1.28 for A < 0: min(-r, -1.28) = -r, unclipped).
  auto logp = torch::tensor({{0.1F, 0.5F}}, torch::requires_grad());
  const auto old = torch::zeros({1, 2});
  const auto adv = torch::tensor({{1.0F, -1.0F}});
  const auto w = torch::ones({1, 2});
  const auto mask = torch::ones({1, 2});
  auto loss = ppo_clip_loss(logp, old, adv, w, mask, 0.2, 0.28);
  const double r1 = std::exp(0.1), r2 = std::exp(0.5);
  EXPECT_NEAR(loss.item<double>(), -(r1 * 1.0 + r2 * -1.0) / 2.0, 1e-6);
  loss.backward();
  const auto g = logp.grad();
  EXPECT_NEAR(g[0][0].item<double>(), -r1 / 2.0, 1e-6);  // d(-r*A/2)/dlogp = -A*r/2
  EXPECT_NEAR(g[0][1].item<double>(), r2 / 2.0, 1e-6);
  // A clipped token has no gradient: A = +1 with r = e^0.5 > 1.28.
  auto logp2 = torch::tensor({{0.5F}}, torch::requires_grad());
  auto loss2 = ppo_clip_loss(logp2, torch::zeros({1, 1}), torch::ones({1, 1}), torch::ones({1, 1}), torch::ones({1, 1}), 0.2, 0.28);
  EXPECT_NEAR(loss2.item<double>(), -1.28, 1e-6);
  loss2.backward();
  EXPECT_EQ(logp2.grad()[0][0].item<double>(), 0.0);
  // Masked tokens count for nothing, not even in the mean's denominator.
  auto loss3 = ppo_clip_loss(torch::tensor({{0.1F, 9.0F}}), torch::zeros({1, 2}), torch::ones({1, 2}), torch::ones({1, 2}),
                             torch::tensor({{1.0F, 0.0F}}), 0.2, 0.28);
  EXPECT_NEAR(loss3.item<double>(), -r1, 1e-6);
  // Group-normalised advantages.
  const auto a = group_advantages({1, 0, 0, 1, 5, 5}, {0, 0, 0, 0, 1, 1});
  EXPECT_NEAR(a[0], 1.0, 1e-5);
  EXPECT_NEAR(a[1], -1.0, 1e-5);
  EXPECT_NEAR(a[4], 0.0, 1e-9);  // equal rewards: no signal
}

// The three averages on one hand-worked batch: sequence 0 has two tokens
// (log-ratios 0.1 and 0.3, A = +1), sequence 1 one (log-ratio 0.4, A = -1;
// its second place is padding), a third row is all padding. Clip 0.2/0.28.
TEST(Grpo, GrpoDapoAndGspoAverageAsTheirPapersOnAHandWorkedBatch) {
  const auto make_logp = [] { return torch::tensor({{0.1F, 0.3F}, {0.4F, 7.0F}, {0.0F, 0.0F}}, torch::requires_grad()); };
  const auto old = torch::zeros({3, 2});
  const auto adv = torch::tensor({{1.0F, 1.0F}, {-1.0F, -1.0F}, {5.0F, 5.0F}});
  const auto w = torch::ones({3, 2});
  const auto mask = torch::tensor({{1.0F, 1.0F}, {1.0F, 0.0F}, {0.0F, 0.0F}});
  const double r1 = std::exp(0.1), r3 = std::exp(0.4);
  // Token surrogates: r1 (inside the clip), 1.28 (e^0.3 = 1.35 clipped, A > 0), -e^0.4 (A < 0: min(-r, -1.28) = -r).
  const double t0 = r1, t1 = 1.28, t2 = -r3;
  {
    auto logp = make_logp();
    const auto loss = policy_loss(PolicyLoss::Dapo, logp, old, adv, w, mask, 0.2, 0.28);
    EXPECT_NEAR(loss.item<double>(), -(t0 + t1 + t2) / 3.0, 1e-6);  // over the batch's three tokens
  }
  {
    auto logp = make_logp();
    const auto loss = policy_loss(PolicyLoss::Grpo, logp, old, adv, w, mask, 0.2, 0.28);
    EXPECT_NEAR(loss.item<double>(), -((t0 + t1) / 2.0 + t2) / 2.0, 1e-6);  // each sequence's mean, then over the two
  }
  {
    auto logp = make_logp();
    const auto loss = policy_loss(PolicyLoss::Gspo, logp, old, adv, w, mask, 0.2, 0.28);
    const double s0 = std::exp((0.1 + 0.3) / 2.0), s1 = r3;  // geometric means of the sequences' ratios
    EXPECT_NEAR(loss.item<double>(), -(s0 * 1.0 + s1 * -1.0) / 2.0, 1e-6);
    loss.backward();
    // One ratio per sequence: both tokens of sequence 0 get the same gradient, -A s0 / (2 tokens x 2 sequences).
    EXPECT_NEAR(logp.grad()[0][0].item<double>(), -s0 / 4.0, 1e-6);
    EXPECT_NEAR(logp.grad()[0][1].item<double>(), -s0 / 4.0, 1e-6);
    EXPECT_NEAR(logp.grad()[1][0].item<double>(), s1 / 2.0, 1e-6);
    EXPECT_EQ(logp.grad()[1][1].item<double>(), 0.0);  // padding
    EXPECT_EQ(logp.grad()[2][0].item<double>(), 0.0);
  }
  // GSPO clips the sequence ratio: s0 = e^0.2 = 1.22 is clipped at 1 + 0.1 and has no gradient.
  auto logp = make_logp();
  const auto clipped = policy_loss(PolicyLoss::Gspo, logp, old, adv, w, mask, 0.1, 0.1);
  EXPECT_NEAR(clipped.item<double>(), -(1.1 - std::exp(0.4)) / 2.0, 1e-6);
  clipped.backward();
  EXPECT_EQ(logp.grad()[0][0].item<double>(), 0.0);
  EXPECT_EQ(policy_loss_from_name("gspo"), PolicyLoss::Gspo);
  EXPECT_THROW(policy_loss_from_name("ppo"), std::invalid_argument);
}

// Six countdown samples drawn by the engine serving a copy of `policy`, with
// the sampler's log-probs, all of version 0.
std::vector<TrainSampleData> sampled_batch(Transformer& policy) {
  Transformer serving(tiny());
  copy_weights(policy, serving);
  EngineOptions o;
  o.slots = 8, o.temperature = 1.0, o.eos = {3}, o.device = test_device();
  KvEngine e(serving, o);
  const CountdownTask task({4, 0.5, 10}, 1);
  std::vector<TrainSampleData> batch;
  for (std::uint64_t k = 0; k < 6; ++k) e.add({k, task.example(static_cast<std::int64_t>(k)).prompt, 0, 20, k});
  while (batch.size() < 6) {
    for (auto& d : e.step()) {
      TrainSampleData s;
      s.prompt = task.example(static_cast<std::int64_t>(d.key)).prompt;
      s.response = d.tokens;
      s.rollout_logprobs = d.logprobs;
      s.token_version.assign(d.tokens.size(), 0);
      s.reward = static_cast<double>(d.key % 2);
      s.group = static_cast<std::int64_t>(d.key / 3);
      batch.push_back(s);
    }
  }
  return batch;
}

std::vector<float> rollout_logprobs_of(const std::vector<TrainSampleData>& batch) {
  std::vector<float> out;
  for (const auto& s : batch) out.insert(out.end(), s.rollout_logprobs.begin(), s.rollout_logprobs.end());
  return out;
}

// april.max_token_staleness on the live trainer: trained at version 3 with a
// cap of 1, the tokens of versions 0 and 1 (staleness 3 and 2) get zero
// weight and the rest train; the count matches the loop's masked_tok rule.
TEST(Grpo, TokensStalerThanTheCapAreMaskedTheRestTrain) {
  auto policy = make_model(11);
  auto batch = sampled_batch(policy);
  std::int64_t total = 0, too_stale = 0;
  for (auto& s : batch) {
    for (std::size_t j = 0; j < s.token_version.size(); ++j) {
      s.token_version[j] = static_cast<std::int64_t>(j % 4);  // versions 0, 1, 2, 3, 0, ...
      too_stale += 3 - s.token_version[j] > 1 ? 1 : 0;
      ++total;
    }
  }
  ASSERT_GT(too_stale, 0);
  ASSERT_LT(too_stale, total);
  GrpoOptions g;
  g.mask_staleness_above = 1;
  GrpoTrainer trainer(policy, std::nullopt, g, test_device());
  const auto st = trainer.step(batch, 3);
  EXPECT_EQ(st.tokens, total);
  EXPECT_EQ(st.masked_tokens, too_stale);
  GrpoOptions none;
  GrpoTrainer unmasked(policy, std::nullopt, none, test_device());
  EXPECT_EQ(unmasked.step(batch, 3).masked_tokens, 0);
}

TEST(Grpo, RatioIsOneAtTheFirstUpdateWhenLogProbsComeFromTheSampler) {
  auto policy = make_model(11);
  const auto batch = sampled_batch(policy);
  GrpoOptions g;
  g.recompute_old_logprobs = false;  // live.old_logprobs=rollout
  GrpoTrainer trainer(policy, std::nullopt, g, test_device());
  trainer.step(batch, 0);
  const auto r = trainer.last_ratios();
  ASSERT_GT(r.numel(), 0);
  EXPECT_LT((r - 1).abs().max().item<double>(), 1e-4);
}

// slime's defaults (live.old_logprobs=recompute, live.tis_cap): with the
// weights the sampler used, the trainer's recomputed log-probs equal the
// sampler's (float32 on CPU, batched full forward against the incremental KV
// decode: 1e-4 covers the summation order) and the TIS weight of those fresh
// tokens is 1. After an update, the same tokens are stale: pi_old is the new
// weights' and the weight is clamp(pi_old / pi_rollout, 0, C), on every token.
TEST(Grpo, RecomputedOldLogProbsEqualTheSamplersAndFreshTokensWeighOne) {
  auto policy = make_model(11);
  auto batch = sampled_batch(policy);
  const auto sampler = torch::tensor(rollout_logprobs_of(batch));
  GrpoOptions g;
  g.tis_cap = 2.0;
  g.lr = 0.05;  // a visible change in one update
  GrpoTrainer trainer(policy, std::nullopt, g, test_device());
  trainer.step(batch, 0);
  ASSERT_EQ(trainer.last_old_logprobs().numel(), sampler.numel());
  EXPECT_LT((trainer.last_old_logprobs() - sampler).abs().max().item<double>(), 1e-4);
  EXPECT_LT((trainer.last_tis_weights() - 1).abs().max().item<double>(), 1e-4);
  EXPECT_LT((trainer.last_ratios() - 1).abs().max().item<double>(), 1e-6);  // pi_old is the loss's own forward

  // The weights moved: the version-0 tokens are stale at version 1.
  trainer.step(batch, 1);
  const auto w = trainer.last_tis_weights();
  const auto want = torch::clamp(torch::exp(trainer.last_old_logprobs() - sampler), 0.0, 2.0);
  EXPECT_LT((w - want).abs().max().item<double>(), 1e-5);
  EXPECT_GT((w - 1).abs().max().item<double>(), 1e-3);  // the update did change them
  EXPECT_LE(w.max().item<double>(), 2.0);
  // With live.tis_scope=stale the fresh tokens keep weight 1 exactly.
  GrpoOptions stale_only = g;
  stale_only.tis_stale_only = true;
  GrpoTrainer t2(make_model(11), std::nullopt, stale_only, test_device());
  t2.step(batch, 0);
  EXPECT_EQ((t2.last_tis_weights() - 1).abs().max().item<double>(), 0.0);
}

}  // namespace
}  // namespace april::live
