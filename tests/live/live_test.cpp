// Tests of the libtorch live backend with the tiny model: on CPU, or on the
// device that APRIL_LIVE_DEVICE names (cuda: scripts/gpu-build-and-test.sh).
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

#include "adapters/live/countdown_task.hpp"
#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/decode_graph.hpp"
#include "adapters/live/detail/device.hpp"
#include "base/atomic_file.hpp"
#include "base/hash.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "adapters/live/live_backend.hpp"
#include "adapters/live/profiler.hpp"
#include "adapters/live/validation.hpp"
#include "studies/machine_drift.hpp"
#include "rl/rl_loop.hpp"
#include "scenario/simulation.hpp"
#include "traces/trace_workload.hpp"
#include "policies/april_policy.hpp"
#include "test_support.hpp"

namespace april::live {
namespace {

ModelConfig tiny(std::int64_t max_seq = 64) { return model_config("tiny", 24, max_seq); }

// The device the tests run on: cpu unless APRIL_LIVE_DEVICE says otherwise.
// Weights are always drawn on the CPU (the same numbers on every device) and
// moved by whatever serves or trains them.
std::string device_name() {
  const char* d = std::getenv("APRIL_LIVE_DEVICE");
  return d != nullptr && *d != '\0' ? d : "cpu";
}
torch::Device test_device() { return parse_device(device_name()); }

Transformer make_model(std::uint64_t seed) {
  torch::manual_seed(seed);
  Transformer m(tiny());
  m->eval();
  return m;
}

std::vector<std::int32_t> run_alone(KvEngine& e, GenRequest r) {
  e.add(std::move(r));
  for (;;) {
    auto done = e.step();
    if (!done.empty()) return done[0].tokens;
  }
}

// float32 on every device (TF32 off, libtorch's default for matmul): 1e-4
// covers the summation orders of a full forward against one-token decodes.
TEST(Transformer, KvCacheDecodingEqualsTheFullForward) {
  auto m = make_model(1);
  const auto dev = test_device();
  m->to(dev);
  torch::NoGradGuard ng;
  const std::vector<std::int64_t> seq = {1, 7, 2, 9, 4, 4, 11, 5, 3, 12};
  const auto t = static_cast<std::int64_t>(seq.size());
  const auto full = m->forward(torch::tensor(seq).unsqueeze(0).to(dev))[0];  // [T, V]
  // Token by token through the fixed-shape decode path, in slot 2 of 4.
  auto cache = m->make_cache(4, test_device());
  for (std::int64_t p = 0; p < t; ++p) {
    auto tok = torch::zeros({4}, torch::kLong), pos = torch::zeros({4}, torch::kLong);
    tok[2] = seq[static_cast<std::size_t>(p)];
    pos[2] = p;
    const auto logits = m->decode(tok.to(dev), pos.to(dev), cache)[2];
    ASSERT_TRUE(torch::allclose(logits, full[p], 1e-4, 1e-4)) << "position " << p;
  }
  // Batched prefill of the first 6 tokens, then decode the rest.
  auto cache2 = m->make_cache(4, test_device());
  const auto last = m->prefill(torch::tensor(std::vector<std::int64_t>(seq.begin(), seq.begin() + 6)).unsqueeze(0).to(dev),
                               torch::tensor(std::vector<std::int64_t>{6}).to(dev), torch::tensor(std::vector<std::int64_t>{1}).to(dev),
                               cache2)[0];
  EXPECT_TRUE(torch::allclose(last, full[5], 1e-4, 1e-4));
  for (std::int64_t p = 6; p < t; ++p) {
    auto tok = torch::zeros({4}, torch::kLong), pos = torch::zeros({4}, torch::kLong);
    tok[1] = seq[static_cast<std::size_t>(p)];
    pos[1] = p;
    ASSERT_TRUE(torch::allclose(m->decode(tok.to(dev), pos.to(dev), cache2)[1], full[p], 1e-4, 1e-4)) << "position " << p;
  }
}

// The optional torch 2.x fast path (fused attention) against the manual one.
TEST(Transformer, FusedAttentionMatchesTheManualOne) {
  if (!TransformerImpl::fast_attention_available()) {
    GTEST_SKIP() << "libtorch " << TORCH_VERSION << " has no scaled_dot_product_attention; the manual path is the only one";
  }
  auto m = make_model(2);
  m->to(test_device());
  torch::NoGradGuard ng;
  const auto tokens = torch::tensor(std::vector<std::int64_t>{1, 5, 2, 8, 8, 3, 9}).unsqueeze(0).to(test_device());
  const auto manual = m->forward(tokens);
  // The grouped-query decode too, token by token into a cache.
  const auto decode_all = [&] {
    auto cache = m->make_cache(2, test_device());
    std::vector<torch::Tensor> out;
    for (std::int64_t p = 0; p < tokens.size(1); ++p) {
      const auto tok = tokens[0][p].expand({2}).contiguous();
      out.push_back(m->decode(tok, torch::full({2}, p, tok.options()), cache));
    }
    return torch::stack(out);
  };
  const auto manual_decode = decode_all();
  m->set_fast_attention(true);
  EXPECT_TRUE(torch::allclose(m->forward(tokens), manual, 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(decode_all(), manual_decode, 1e-5, 1e-5));
}

// On CUDA the engine replays its decode from a captured graph: the same
// kernels as the eager decode, so the same logits iteration after iteration
// (1e-5: the capture may pick other cuBLAS workspaces). Elsewhere the graph
// path is the eager decode and captures nothing.
TEST(Transformer, GraphDecodeEqualsTheEagerDecode) {
  const auto dev = test_device();
  auto m = make_model(4);
  m->to(dev);
  torch::NoGradGuard ng;
  DecodeGraph graph(dev, true);
  auto cache_graph = m->make_cache(4, dev), cache_eager = m->make_cache(4, dev);
  for (std::int64_t p = 0; p < 12; ++p) {
    const std::vector<std::int64_t> tok = {1 + p % 20, 2 + (3 * p) % 20, 5, 1 + (7 * p) % 23};
    const std::vector<std::int64_t> pos = {p, p, std::min<std::int64_t>(p, 4), p / 2};
    const auto got = graph.run(m, cache_graph, tok, pos).cpu();
    const auto want = m->decode(torch::tensor(tok).to(dev), torch::tensor(pos).to(dev), cache_eager).cpu();
    ASSERT_TRUE(torch::allclose(got, want, 1e-5, 1e-5)) << "iteration " << p;
  }
  EXPECT_EQ(graph.captured(), dev.is_cuda() && DecodeGraph::available());
}

TEST(Transformer, FusedAttentionIsRefusedWhereMissing) {
  auto m = make_model(2);
  if (TransformerImpl::fast_attention_available()) GTEST_SKIP() << "libtorch has the fused path";
  EXPECT_THROW(m->set_fast_attention(true), std::invalid_argument);
}

// Abort after k tokens, resume with prompt + those tokens: the same tokens as
// an uninterrupted run, greedy and sampled, with both prefill modes.
TEST(KvEngine, AbortThenResumeGivesTheTokensOfAnUninterruptedRun) {
  for (auto [temperature, exact, dtype] : {std::tuple{0.0, true, torch::kFloat32}, {0.0, false, torch::kFloat32}, {1.0, true, torch::kFloat32},
                                           {1.0, false, torch::kFloat32}, {1.0, true, torch::kBFloat16}}) {
    {
      EngineOptions o;
      // No EOS: every run is 30 tokens long, so both cuts fall mid-answer.
      o.slots = 8, o.temperature = temperature, o.top_p = 0.9, o.exact_prefill = exact, o.eos = -1, o.device = test_device();
      o.dtype = dtype;
      const GenRequest req{42, {1, 9, 2}, 0, 30, 1234};
      KvEngine whole(make_model(5), o);
      const auto expected = run_alone(whole, req);
      ASSERT_EQ(expected.size(), 30U);
      for (int cut_steps : {2, 5, 17}) {
        KvEngine e(make_model(5), o);
        e.add(req);
        for (int i = 0; i < cut_steps; ++i) ASSERT_TRUE(e.step().empty());
        auto partial = e.abort_all();
        ASSERT_EQ(partial.size(), 1U);
        auto got = partial[0].tokens;
        GenRequest resume = req;
        resume.context.insert(resume.context.end(), got.begin(), got.end());
        resume.generated_before = static_cast<std::int32_t>(got.size());
        resume.max_new = req.max_new - resume.generated_before;
        const auto rest = run_alone(e, resume);
        got.insert(got.end(), rest.begin(), rest.end());
        EXPECT_EQ(got, expected) << "temperature " << temperature << " exact " << exact << " " << c10::toString(dtype) << " cut " << cut_steps;
      }
    }
  }
}

// live.prefill_pad_tok: a batched prefill padded to a multiple of 16 tokens
// (fewer distinct shapes for the GPU) gives the same tokens: padded positions
// sit after every real one, so the causal mask hides them, and decoding
// overwrites their cache entries before they become visible.
TEST(KvEngine, PaddedBatchedPrefillGivesTheSameTokens) {
  for (double temperature : {0.0, 1.0}) {
    std::vector<std::vector<std::int32_t>> by_pad;
    for (std::int64_t pad : {1, 16}) {
      EngineOptions o;
      o.slots = 8, o.temperature = temperature, o.exact_prefill = false, o.eos = 3, o.device = test_device(), o.prefill_pad_tok = pad;
      KvEngine e(make_model(6), o);
      // Contexts of 3 to 9 tokens, as resumed samples bring.
      for (std::uint64_t k = 0; k < 6; ++k) {
        std::vector<std::int32_t> ctx = {1, static_cast<std::int32_t>(5 + k), 2};
        for (std::uint64_t j = 0; j < k; ++j) ctx.push_back(static_cast<std::int32_t>(4 + (j * 7 + k) % 18));
        e.add({k, ctx, static_cast<std::int32_t>(k), 20, 50 + k});
      }
      std::vector<std::int32_t> all;
      std::size_t finished = 0;
      while (finished < 6) {
        for (auto& d : e.step()) {
          all.push_back(static_cast<std::int32_t>(d.key));
          all.insert(all.end(), d.tokens.begin(), d.tokens.end());
          ++finished;
        }
      }
      by_pad.push_back(all);
    }
    EXPECT_EQ(by_pad[0], by_pad[1]) << "temperature " << temperature;
  }
}

TEST(KvEngine, ARequestsOutputIsTheSameAloneAndInAFullBatch) {
  for (bool exact : {true, false}) {
    EngineOptions o;
    o.slots = 16, o.temperature = 1.0, o.exact_prefill = exact, o.eos = 3, o.device = test_device();
    const GenRequest probe{7, {1, 12, 2}, 0, 40, 99};
    KvEngine alone(make_model(3), o);
    const auto expected = run_alone(alone, probe);
    KvEngine busy(make_model(3), o);
    for (std::uint64_t k = 0; k < 15; ++k) {
      busy.add({100 + k, {1, static_cast<std::int32_t>(4 + k % 20), 2}, 0, 40, 1000 + k});
    }
    busy.add(probe);
    std::vector<std::int32_t> got;
    bool found = false;
    while (!found) {
      for (auto& d : busy.step()) {
        if (d.key == probe.key) {
          got = d.tokens;
          found = true;
        }
      }
    }
    EXPECT_EQ(got, expected) << "exact prefill " << exact;
  }
}

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

// Six countdown samples drawn by the engine serving a copy of `policy`, with
// the sampler's log-probs, all of version 0.
std::vector<TrainSampleData> sampled_batch(Transformer& policy) {
  Transformer serving(tiny());
  copy_weights(policy, serving);
  EngineOptions o;
  o.slots = 8, o.temperature = 1.0, o.eos = 3, o.device = test_device();
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

LiveOptions tiny_live() {
  LiveOptions o;
  o.model_size = "tiny";
  o.slots = 16;
  o.max_response_len = 16;
  o.exact_prefill = false;
  o.threads = 1;
  o.seed = 3;
  o.device = device_name();
  return o;
}

// One pass of the tiny model's profile, for a live batch of `batch_samples`.
ProfileOptions tiny_profile(std::int64_t slots, std::int32_t max_response_len, std::int64_t batch_samples) {
  ProfileOptions o;
  o.model_size = "tiny";
  o.device = device_name();
  o.slots = slots;
  o.max_response_len = max_response_len;
  o.repeats = 1;
  o.batch_samples = batch_samples;
  return o;
}

// The profile times train steps on live batches (B x n answers at the task's
// own lengths), alone and beside the engine, so that the calibrated train
// model and its slowdown are fitted at the shape the twin predicts; eight
// side-by-side probes per pass.
TEST(LiveProfiler, TrainProbesIncludeLiveBatchesAtTheTasksLengths) {
  auto o = tiny_profile(8, 16, 12);
  o.task = {6, 0.7, 14};
  const auto prof = profile_live(o);
  const auto live_shaped = std::count_if(prof.train.begin(), prof.train.end(), [](const studies::TrainPoint& t) { return t.samples == 12; });
  EXPECT_EQ(live_shaped, 3);
  ASSERT_EQ(prof.train_beside_engines.size(), 8U);
  ASSERT_EQ(prof.train_alone_paired.size(), 8U);
  for (const auto& t : prof.train_beside_engines) {
    EXPECT_EQ(t.samples, 12);
    // Countdown answers (N + 1 tokens, N lognormal around 6) are shorter than
    // the cap: the batch is not the padded worst case.
    EXPECT_LT(t.longest_tok, 3 + 16);
    EXPECT_GT(t.tokens, 12 * (3 + 1));
  }
  // Fresh draws each probe: the contention batches differ.
  EXPECT_NE(prof.train_beside_engines[0].tokens, prof.train_beside_engines[1].tokens);
  // Each side-by-side probe times the step's handoff both ways (the twin's train.handoff_s).
  ASSERT_EQ(prof.train_start_latency_s.size(), 8U);
  ASSERT_EQ(prof.train_end_latency_s.size(), 8U);
  for (const auto* v : {&prof.train_start_latency_s, &prof.train_end_latency_s}) {
    for (double s : *v) {
      EXPECT_GE(s, 0.0);
      EXPECT_LT(s, 5.0);
    }
  }
}

// Given the live runs' batches (april validate hands over each round's), the
// probes on a live batch take their lengths, in turn, instead of the task's:
// the twin predicts steps at the policy model's answers. An empty batch is
// skipped, and the samples are the batch's own count (lengths beyond the cap
// are held to it, as a live answer is).
TEST(LiveProfiler, LiveBatchProbesTakeTheLiveRunsBatchesInTurn) {
  LiveProfiler profiler(tiny_profile(8, 16, 12));
  const std::vector<std::int32_t> even(12, 2);  // 12 x (3 + 2) tokens, longest 5
  std::vector<std::int32_t> spread;
  for (std::int32_t k = 1; k <= 10; ++k) spread.push_back(2 * k);  // 10 samples, 18 and 20 held to 16: longest 19
  profiler.use_live_batches({even, {}, spread});
  profiler.run(profiler.probes_per_pass());
  const auto prof = profiler.profile();
  const auto is_even = [](const studies::TrainPoint& t) { return t.samples == 12 && t.tokens == 60 && t.longest_tok == 5; };
  const auto is_spread = [](const studies::TrainPoint& t) {
    return t.samples == 10 && t.tokens == 10 * 3 + (2 + 4 + 6 + 8 + 10 + 12 + 14 + 16 + 16 + 16) && t.longest_tok == 19;
  };
  const auto count = [](const std::vector<studies::TrainPoint>& v, const auto& pred) { return std::count_if(v.begin(), v.end(), pred); };
  // Three live-batch train probes and eight side-by-side ones per pass, every one a given batch, alternating.
  EXPECT_EQ(count(prof.train, is_even) + count(prof.train, is_spread), 3);
  ASSERT_EQ(prof.train_beside_engines.size(), 8U);
  ASSERT_EQ(prof.train_alone_paired.size(), 8U);
  EXPECT_EQ(count(prof.train_beside_engines, is_even) + count(prof.train_beside_engines, is_spread), 8);
  EXPECT_GE(count(prof.train_beside_engines, is_even), 2);
  EXPECT_GE(count(prof.train_beside_engines, is_spread), 2);
  for (std::size_t i = 0; i < prof.train_beside_engines.size(); ++i) {
    EXPECT_EQ(prof.train_alone_paired[i].tokens, prof.train_beside_engines[i].tokens);  // each pair on one batch
  }
  // The probe grid's other train steps keep their shapes: none of them is 12 or 10 samples.
  EXPECT_EQ(count(prof.train, [](const studies::TrainPoint& t) { return t.samples == 12 || t.samples == 10; }), 3);
}

// Each run() is one slice of the profile, and the profile says where each
// ended: `april validate` reads the machine's speed between its live steps
// from them (studies::slice_slowdowns).
TEST(LiveProfiler, EachRunIsASliceOfTheProfile) {
  LiveProfiler profiler(tiny_profile(8, 16, 12));
  profiler.run(3);
  profiler.run(profiler.probes_per_pass() - 3);
  profiler.run(5);
  const auto prof = profiler.profile();
  ASSERT_EQ(prof.slices.size(), 3U);
  EXPECT_EQ(prof.slices.back().iterations_end, static_cast<std::int64_t>(prof.iterations.size()));
  EXPECT_EQ(prof.slices.back().train_end, static_cast<std::int64_t>(prof.train.size()));
  // The first probes of a pass are iterations: the first slice measured some, and every slice ends after the one before.
  EXPECT_GT(prof.slices[0].iterations_end, 0);
  for (std::size_t k = 1; k < prof.slices.size(); ++k) {
    EXPECT_GE(prof.slices[k].iterations_end, prof.slices[k - 1].iterations_end);
    EXPECT_GE(prof.slices[k].train_end, prof.slices[k - 1].train_end);
  }
  // The second pass's first probes repeat the first's shapes: the last slice's speed can be told.
  const auto slow = studies::slice_slowdowns(prof);
  ASSERT_EQ(slow.size(), 3U);
  ASSERT_TRUE(slow[2].has_value());
  EXPECT_GT(*slow[2], 0.0);
}

// Every iteration the profile keeps has a shape of the probe grid: the engine
// work between probes (the side-by-side probes, spread among the iteration
// probes, and the rollout wave before each timed train step) leaves no request
// behind for the iteration probes after it, whose shapes the calibration takes
// as set. (Without the side-by-side probe's final abort, its last wave ran on
// into the next iteration probes.)
TEST(LiveProfiler, EngineWorkBetweenProbesLeavesTheIterationShapesAsSet) {
  const auto prof = profile_live(tiny_profile(8, 16, 12));
  const std::set<double> decoders = {0, 1, 4, 7};  // 0, 1, slots/8, slots/2, slots - slots/8
  const std::set<double> admitted = {1, 4, 7, 8};  // 1, slots/8, slots/2, slots; and the decoders' own start
  ASSERT_FALSE(prof.iterations.empty());
  for (const auto& it : prof.iterations) {
    EXPECT_TRUE(decoders.count(it.decode_batch()) == 1) << "decoding " << it.decode_batch();
    EXPECT_TRUE(it.prefill_requests == 0 || admitted.count(it.prefill_requests) == 1) << "admitted " << it.prefill_requests;
    EXPECT_LE(it.batch, 8);
  }
}

// No train probe is larger than a live batch: no live step has such a shape,
// and the one at 2x the batch grew the heap past the trim threshold, so the
// live steps after it faulted their pages in again (profiler.cpp).
TEST(LiveProfiler, TrainProbesStopAtTheLiveBatch) {
  const auto prof = profile_live(tiny_profile(16, 8, 8));
  ASSERT_FALSE(prof.train.empty());
  for (const auto& t : prof.train) EXPECT_LE(t.samples, 8);
  for (const auto& t : prof.train_beside_engines) EXPECT_LE(t.samples, 8);
}

// An overlapped run trains on a thread of its own. Its steps must reuse the
// memory the previous step freed, as a step on the main thread does: with
// glibc's default arena per thread, the thread's heaps were unmapped when they
// emptied and each step faulted its tensors' pages in afresh (16,600 minor
// faults per step against 280, 1.5x the step time; bench/
// live_trainer_thread_bench.cpp). Counted, not timed: faults are not noise.

TEST(CpuRuntime, ATrainStepOnItsOwnThreadReusesFreedMemory) {
  if (test_device().is_cuda()) GTEST_SKIP() << "host page faults: a CPU test";
  configure_runtime(1);
  torch::manual_seed(3);
  const CountdownTask task(CountdownParams{}, 1);
  GrpoTrainer trainer(Transformer(model_config("small", task.vocab(), task.max_prompt_tok() + 32)), std::nullopt, GrpoOptions{},
                      torch::Device(torch::kCPU));
  std::vector<TrainSampleData> batch;
  for (int i = 0; i < 32; ++i) {
    batch.push_back(filler_sample({CountdownTask::kBos, CountdownTask::kOne, CountdownTask::kSep}, CountdownTask::kOne,
                                  static_cast<std::size_t>(8 + i % 16), i % 2, i / 4));
  }
  const auto step_on_own_thread = [&] {
    return std::async(std::launch::async, [&] {
             torch::set_num_threads(1);
             const auto before = thread_minor_faults();
             trainer.step(batch, 0);
             return thread_minor_faults() - before;
           })
        .get();
  };
  trainer.step(batch, 0);  // the shape's memory, once, on this thread
  const auto first = step_on_own_thread();
  const auto second = step_on_own_thread();
  // Measured on the 2-core machine: 1 fault with one arena, 63,622 with an
  // arena per thread.
  EXPECT_LT(second, 1500) << "first step on a thread: " << first << " faults";
}

// What a run of the RL loop did, step by step: for comparing a live run with
// its simulator twin.
struct LoopRecord {
  std::vector<std::vector<std::string>> batches, buffers;  // prompt ids
  std::vector<rl::StepMetrics> steps;
  std::vector<base::GroupSpec> trace;  // live runs only: what the twin replays
};

// Runs `steps` steps of `loop`, recording batches, buffers and metrics; with
// `lengths`, also each batched sample's final length by its group's draw index.
void record_steps(rl::RlLoop& loop, int steps, LoopRecord& r, std::map<std::int64_t, std::vector<std::int32_t>>* lengths) {
  loop.on_batch = [&](std::int64_t, const auto& ids) {
    std::vector<std::string> b;
    for (const auto& [id, prompt] : ids) {
      b.push_back(prompt);
      if (lengths == nullptr) continue;
      for (const auto& segs : loop.group_segments(id)) {
        std::int32_t n = 0;
        for (const auto& s : segs) n += s.tokens;
        (*lengths)[id].push_back(n);
      }
    }
    r.batches.push_back(b);
  };
  for (int s = 0; s < steps; ++s) {
    r.steps.push_back(loop.run_step());
    std::vector<std::string> buf;
    for (auto id : loop.buffer()) buf.push_back(loop.prompt_id(id));
    r.buffers.push_back(buf);
  }
}

// A live run of `policy` on the countdown task (B = 2, n = 2, cap 16), and
// the trace its twin replays (live_trace): batched groups with their final
// lengths, groups never batched at the cap, so that they do not complete
// earlier than they did live.
LoopRecord run_live(policies::Policy& policy, int steps, const CountdownParams& params = {4, 0.6, 10}, std::int64_t slots = 16) {
  const CountdownTask task(params, 7);
  LiveOptions o = tiny_live();
  o.slots = slots;
  LiveBackend live(o, task);
  CountdownWorkload workload(task, 2);
  rl::RlLoop loop(live, policy, workload, {2, 16, false});
  LoopRecord r;
  std::map<std::int64_t, std::vector<std::int32_t>> lengths;
  record_steps(loop, steps, r, &lengths);
  r.trace = live_trace(lengths, workload.next_index(), 2, 16, LiveTraceUse::kTwin, params.dataset_prompts);
  return r;
}

// The simulator twin: one engine, 1 ms per iteration, no cap (handcheck),
// which completes samples in the same order as the live engine.
LoopRecord run_twin(const base::Config& config, policies::Policy& policy, const std::vector<base::GroupSpec>& trace, int steps) {
  auto sim_backend = scenario::make_sim_backend(config);
  traces::TraceReplay replay(trace, "live");
  rl::RlLoop loop(*sim_backend, policy, replay, {2, 16, false});
  LoopRecord r;
  record_steps(loop, steps, r, nullptr);
  return r;
}

// A policy that keeps state from step to step cannot serve two runs: the
// registry entry makes one object for the live run and one for its twin.
struct LiveAndTwin {
  LoopRecord live, sim;
};
LiveAndTwin live_and_twin(const april::testing::Fixture& f, const std::string& policy, int steps, const CountdownParams& params = {4, 0.6, 10},
                          std::int64_t slots = 16) {
  const auto& entry = f.registry.get(policy);
  auto live_policy = entry.make(f.config);
  LiveAndTwin r;
  r.live = run_live(*live_policy, steps, params, slots);
  auto sim_policy = entry.make(f.config);
  r.sim = run_twin(f.config, *sim_policy, r.live.trace, steps);
  return r;
}

std::vector<std::int64_t> groups_submitted(const LoopRecord& r) {
  std::vector<std::int64_t> out;
  for (const auto& m : r.steps) out.push_back(m.groups_submitted);
  return out;
}

// One policy object drives the live backend and, given the same completion
// order, the simulator to the same decisions: the live run's sample lengths
// become a trace, and the simulator replays it.
TEST(OnePolicyTwoBackends, SameCompletionOrderSameDecisions) {
  april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "april.alpha=2", "max_response_len=16"});
  auto policy = f.registry.get("april").make(f.config);  // one object for both runs
  const auto live = run_live(*policy, 5);
  const auto sim = run_twin(f.config, *policy, live.trace, 5);
  EXPECT_EQ(sim.buffers, live.buffers);
  EXPECT_EQ(sim.batches, live.batches);
}

// tail_batching (resume=keep) on both backends: short rounds of B' = 4, and
// long rounds of the B prompts set aside, the same on the live engine and
// on its twin. (With resume=restart a set-aside prompt's first attempt is
// sampled again live, with other lengths than the trace holds for it, so a
// twin could not replay it.)
TEST(OnePolicyTwoBackends, TailBatchingRunsTheSameShortAndLongRoundsLiveAndSimulated) {
  april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "max_response_len=16", "tail_batching.alpha=2",
                                          "tail_batching.resume=keep"});
  const auto [live, sim] = live_and_twin(f, "tail_batching", 6);
  EXPECT_EQ(sim.batches, live.batches);
  EXPECT_EQ(sim.buffers, live.buffers);
  const auto live_submitted = groups_submitted(live);
  EXPECT_EQ(groups_submitted(sim), live_submitted);
  // A long round submits exactly the B set-aside prompts: one happened.
  EXPECT_NE(std::find(live_submitted.begin(), live_submitted.end(), 2), live_submitted.end()) << "no long round: the test would prove little";
}

// length_aware on both backends: a dataset of 3 prompts (each comes back
// every 1.5 steps), an engine that runs 2 of the step's 4 samples at a time,
// so admission order decides the completion order. The live engine and the
// simulator (handcheck, engine.max_running=2) admit in the order the policy
// gives, so they complete groups alike: the same batches, in the same order.
// Long first changes that order live (against as_given), so the test would
// see a live engine that ignored it.
TEST(OnePolicyTwoBackends, LengthAwareAdmitsInTheSameOrderLiveAndSimulated) {
  const CountdownParams dataset{4, 0.6, 10, 3};
  const int steps = 8;
  std::vector<std::vector<std::vector<std::string>>> live_batches;
  for (const std::string order : {"long_first", "as_given"}) {
    april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "max_response_len=16",
                                            "engine.max_running=2", "length_aware.base=sync", "length_aware.order=" + order});
    const auto [live, sim] = live_and_twin(f, "length_aware", steps, dataset, 2);
    EXPECT_EQ(sim.batches, live.batches) << order;
    live_batches.push_back(live.batches);
  }
  EXPECT_NE(live_batches[0], live_batches[1]) << "long first never changed the completion order: the test would prove nothing";
}

// april_adaptive on both backends: the same factory makes one object for the
// live run and one for its simulator twin (the controller carries state from
// step to step, so one object cannot serve both runs). Same completion order
// and the same tokens at each abort give the same off-policy shares, so the
// same B' every step, the same batches and the same buffers.
TEST(OnePolicyTwoBackends, AprilAdaptiveChoosesTheSameOverProvisioningLiveAndSimulated) {
  april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "max_response_len=16",
                                          "april_adaptive.alpha=2", "april_adaptive.target_offpolicy=0.2", "april_adaptive.gain=4"});
  const int steps = 6;
  const auto [live, sim] = live_and_twin(f, "april_adaptive", steps);
  for (int s = 0; s < steps; ++s) {
    const auto k = static_cast<std::size_t>(s);
    EXPECT_EQ(sim.steps[k].tokens_offpolicy, live.steps[k].tokens_offpolicy) << "step " << s;
  }
  const auto live_submitted = groups_submitted(live);
  EXPECT_EQ(groups_submitted(sim), live_submitted);
  EXPECT_EQ(sim.batches, live.batches);
  EXPECT_EQ(sim.buffers, live.buffers);
  // It adapted: B' left its starting 4.
  EXPECT_NE(std::count(live_submitted.begin(), live_submitted.end(), 4), steps) << "B' never changed";
}

// Interruption under async.on_update=recompute (AReaL): a request in flight
// at a weight sync drops its KV and is prefilled again; the tokens it makes
// after the update are those of a fresh request under the new weights whose
// prompt is its prompt plus the tokens it had, with the same seed.
TEST(LiveOverlap, ARecomputedRequestContinuesAsAFreshOneUnderTheNewWeights) {
  const CountdownTask task({8, 0.6, 20}, 7);
  const auto dir = (std::filesystem::temp_directory_path() / "april_live_recompute").string();
  for (double temperature : {0.0, 1.0}) {
    LiveOptions o = tiny_live();
    o.exact_prefill = true;
    o.temperature = temperature;
    o.max_response_len = 24;
    LiveBackend b(o, task);
    // Group 0: two samples of at most 2 tokens, trained while the probes
    // (groups 1 to 4, two samples each, up to 24 tokens) generate.
    const auto request = [&](std::int64_t group, std::int32_t index, std::int32_t max_new) {
      rl::SampleRequest r;
      r.key = rl::make_sample_key(group, index);
      r.prompt_id = CountdownTask::prompt_id(group);
      r.prompt_tok = 3;
      r.max_new_tok = max_new;
      return r;
    };
    for (std::int32_t i = 0; i < 2; ++i) b.submit(request(0, i, 2));
    std::vector<rl::SampleKey> probes;
    for (std::int64_t g = 1; g <= 4; ++g) {
      for (std::int32_t i = 0; i < 2; ++i) {
        b.submit(request(g, i, 24));
        probes.push_back(rl::make_sample_key(g, i));
      }
    }
    std::map<rl::SampleKey, rl::SampleProgress> done;
    std::vector<rl::TrainSample> batch;
    while (batch.size() < 2) {
      for (auto& p : b.wait_for_events().finished) {
        if (rl::key_group(p.key) == 0) {
          batch.push_back({p.key, 3, p.new_tok, 0, {{0, p.new_tok}}});
        } else {
          done[p.key] = p;
        }
      }
    }
    b.start_train(batch, 0);
    // The train step computes before the engine moves on: the sync then
    // cuts every probe still running exactly where group 0 finished.
    b.wait_for_trainer();
    auto ev = b.wait_for_events();
    ASSERT_TRUE(ev.train_ended);
    ASSERT_TRUE(ev.finished.empty());
    b.start_sync(1, true);
    ev = b.wait_for_events();
    ASSERT_TRUE(ev.sync_ended);
    while (done.size() < probes.size()) {
      for (auto& p : b.wait_for_events().finished) done[p.key] = p;
    }
    base::remove_tree(dir);
    b.save(dir);  // the trainer's weights: version 1
    Transformer updated(model_config(o.model_size, task.vocab(), task.max_prompt_tok() + o.max_response_len));
    torch::load(updated, (std::filesystem::path(dir) / "model.pt").string());
    EngineOptions e;
    e.slots = o.slots, e.temperature = temperature, e.top_p = o.top_p, e.exact_prefill = true, e.eos = CountdownTask::kEos, e.device = test_device();
    KvEngine fresh(updated, e);
    int cut = 0;
    for (auto key : probes) {
      const auto& p = done.at(key);
      const auto tokens = b.sample_tokens(key);
      ASSERT_EQ(static_cast<std::int32_t>(tokens.size()), p.new_tok);
      if (p.by_version.empty()) continue;  // finished before the sync
      ASSERT_EQ(p.by_version.size(), 2U) << "key " << key;
      EXPECT_EQ(p.by_version[0].version, 0);
      EXPECT_EQ(p.by_version[1].version, 1);
      const auto k = p.by_version[0].tokens;
      ASSERT_GT(k, 0);
      ASSERT_EQ(k + p.by_version[1].tokens, p.new_tok);
      GenRequest r;
      r.key = key;
      r.context = task.example(rl::key_group(key)).prompt;
      r.context.insert(r.context.end(), tokens.begin(), tokens.begin() + k);
      r.generated_before = k;
      r.max_new = 24 - k;
      r.seed = base::combine_seeds(o.seed, key);
      const auto rest = run_alone(fresh, r);
      EXPECT_EQ(rest, std::vector<std::int32_t>(tokens.begin() + k, tokens.end())) << "temperature " << temperature << " key " << key;
      ++cut;
    }
    EXPECT_GT(cut, 0) << "no probe was in flight at the sync; temperature " << temperature;
  }
  base::remove_tree(dir);
}

// A live overlapped run in lockstep mode (a train step lasts exactly K engine
// iterations) and its simulator twin (1 ms per iteration, train K ms, sync
// instant) on the live run's lengths: the same batches, and every token of
// every trained sample carries the same version, for one_step_off and for
// async with either on_update.
struct OverlapRecord {
  std::vector<std::vector<std::string>> batches;
  std::vector<std::vector<std::vector<rl::Segment>>> segments;  // per batch, per sample
  std::vector<rl::StepMetrics> steps;
  std::vector<base::GroupSpec> trace;
};

void record_overlapped(rl::RlLoop& loop, int steps, OverlapRecord& r) {
  loop.on_batch = [&](std::int64_t, const auto& ids) {
    std::vector<std::string> b;
    std::vector<std::vector<rl::Segment>> segs;
    for (const auto& [id, prompt] : ids) {
      b.push_back(prompt);
      for (const auto& s : loop.group_segments(id)) segs.push_back(s);
    }
    r.batches.push_back(b);
    r.segments.push_back(segs);
  };
  for (int s = 0; s < steps; ++s) r.steps.push_back(loop.run_step());
}

OverlapRecord run_live_overlapped(const base::Config& config, policies::Policy& policy, int steps, std::int64_t lockstep) {
  const CountdownTask task({4, 0.6, 10}, 7);
  LiveOptions o = tiny_live();
  o.train_lockstep_iterations = lockstep;
  LiveBackend live(o, task);
  CountdownWorkload workload(task, 2);
  rl::RlLoop loop(live, policy, workload, {config.get_int("rollout_batch_size"), 16, false});
  OverlapRecord r;
  record_overlapped(loop, steps, r);
  // Every prompt is new here, so its index is its group's draw index.
  std::map<std::int64_t, std::vector<std::int32_t>> lengths;
  for (std::size_t b = 0; b < r.batches.size(); ++b) {
    for (std::size_t i = 0; i < r.segments[b].size(); ++i) {
      std::int32_t n = 0;
      for (const auto& s : r.segments[b][i]) n += s.tokens;
      lengths[CountdownTask::index_of(r.batches[b][i / 2])].push_back(n);
    }
  }
  r.trace = live_trace(lengths, workload.next_index(), 2, 16, LiveTraceUse::kTwin);
  return r;
}

TEST(OnePolicyTwoBackends, OverlappedPoliciesGiveTheSameVersionsLiveAndSimulated) {
  const int steps = 6;
  for (const std::string name : {"one_step_off", "async"}) {
    for (const std::string update : {"recompute", "keep_kv"}) {
      if (name == "one_step_off" && update == "keep_kv") continue;  // one_step_off never has requests in flight at a sync
      april::testing::Fixture f("handcheck", {"cluster.mode=disaggregated", "cluster.gpus=2", "rollout_batch_size=2",
                                              "n_samples_per_prompt=2", "max_response_len=16", "train.time_model=linear",
                                              "train.linear_base_s=0.003", "async.eta=1", "async.on_update=" + update});
      const auto& entry = f.registry.get(name);
      auto live_policy = entry.make(f.config);
      const auto live = run_live_overlapped(f.config, *live_policy, steps, 3);
      auto sim_policy = entry.make(f.config);
      auto sim_backend = scenario::make_sim_backend(f.config);
      traces::TraceReplay replay(live.trace, "live");
      rl::RlLoop loop(*sim_backend, *sim_policy, replay, {2, 16, false});
      OverlapRecord sim;
      record_overlapped(loop, steps, sim);
      EXPECT_EQ(sim.batches, live.batches) << name << " " << update;
      EXPECT_EQ(sim.segments, live.segments) << name << " " << update;
      std::int64_t stale = 0;
      for (const auto& m : live.steps) stale += m.tokens_offpolicy;
      if (name == "async") {
        EXPECT_GT(stale, 0) << "no token outlived a version: the test checks nothing " << update;
      }
      // Reproducible: the same run again gives the same tokens and rewards.
      auto again_policy = entry.make(f.config);
      const auto again = run_live_overlapped(f.config, *again_policy, steps, 3);
      EXPECT_EQ(again.segments, live.segments) << name << " " << update;
      for (int s = 0; s < steps; ++s) {
        const auto k = static_cast<std::size_t>(s);
        EXPECT_EQ(again.steps[k].reward_mean, live.steps[k].reward_mean) << name << " step " << s;
      }
    }
  }
}

// A policy's train log over a few live steps on the tiny model: every step
// computed (taken after each step), the batches handed over, and what a
// second take right after the last one held. `before_step` runs before each.
struct TrainLogRun {
  std::vector<LiveTrainStep> log;
  std::int64_t batches = 0;
  std::size_t taken_twice = 0;
};
TrainLogRun run_train_log(const std::string& name, int steps, const std::function<void()>& before_step = {}) {
  april::testing::Fixture f("handcheck", {name == "sync" ? "cluster.mode=colocated" : "cluster.mode=disaggregated", "cluster.gpus=2",
                                          "rollout_batch_size=2", "n_samples_per_prompt=2", "max_response_len=16"});
  auto policy = f.registry.get(name).make(f.config);
  const CountdownTask task({4, 0.6, 10}, 7);
  LiveOptions o = tiny_live();
  o.record_iterations = true;
  LiveBackend live(o, task);
  CountdownWorkload workload(task, 2);
  rl::RlLoop loop(live, *policy, workload, {2, 16, false});
  TrainLogRun run;
  loop.on_batch = [&](std::int64_t, const auto&) { ++run.batches; };
  for (int s = 0; s < steps; ++s) {
    if (before_step) before_step();
    loop.run_step();
    for (const auto& t : live.take_train_log()) run.log.push_back(t);
  }
  live.wait_for_trainer();
  run.taken_twice = live.take_train_log().size();
  return run;
}

// validate compares each live train step with the twin's model of it: the
// log must hold every step computed, once, with its batch's shape and the
// engine's time beside it (none where the loop trains alone).
TEST(LiveBackend, TheTrainLogHoldsEveryComputedStepWithItsShapeAndTheEnginesTimeBesideIt) {
  for (const std::string name : {"sync", "one_step_off"}) {
    const bool overlapped = name == "one_step_off";
    const auto [log, batches, taken_twice] = run_train_log(name, 4);
    // Every batch handed over is a train step; the last overlapped one may
    // still be reported by the next step's events, so at most one is missing.
    EXPECT_LE(static_cast<std::int64_t>(log.size()), batches) << name;
    EXPECT_GE(static_cast<std::int64_t>(log.size()), overlapped ? batches - 1 : batches) << name;
    EXPECT_GE(log.size(), 3U) << name;
    for (const auto& t : log) {
      EXPECT_EQ(t.point.samples, 4) << name;
      EXPECT_GT(t.point.time_s, 0) << name;
      EXPECT_LE(t.point.tokens, t.point.samples * t.point.longest_tok) << name;
      EXPECT_GT(t.point.longest_tok, 0) << name;
      EXPECT_GE(t.beside_engine_s, 0) << name;
      EXPECT_LE(t.beside_engine_s, t.point.time_s) << name;
      if (!overlapped) {
        EXPECT_EQ(t.beside_engine_s, 0) << name;
      }
    }
    EXPECT_EQ(taken_twice, 0U) << name << ": taken twice";
  }
}

// A train step that grows the heap is slow for a reason its shape does not
// give (each new page is faulted in), so validate's train log counts each
// step's page faults: those of the trainer's thread, where the step runs,
// not of the thread that waits for it. The free heap is handed back before
// every step, so every step must fault pages in again.
TEST(LiveBackend, TheTrainLogCountsEachStepsPageFaultsOnTheTrainersThread) {
  if (test_device().is_cuda()) GTEST_SKIP() << "host page faults: a CPU test";
  for (const std::string name : {"sync", "one_step_off"}) {
    const auto run = run_train_log(name, 4, [] { malloc_trim(0); });
    ASSERT_GE(run.log.size(), 3U) << name;
    for (const auto& t : run.log) EXPECT_GT(t.minor_faults, 0) << name;
  }
}

// validate grows the heap with one scratch train step before the live runs:
// it must leave the run exactly as it would have been (weights, optimizer,
// torch's global generator, the train log).
TEST(LiveBackend, GrowingTheHeapForTrainLeavesTheRunAsItWas) {
  april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "max_response_len=16"});
  const CountdownTask task({4, 0.6, 10}, 7);
  const auto run = [&](bool grow) {
    auto policy = f.registry.get("sync").make(f.config);
    LiveOptions o = tiny_live();
    o.record_iterations = true;
    LiveBackend live(o, task);
    torch::manual_seed(11);
    if (grow) live.grow_heap_for_train(8);
    const double drawn = torch::rand({1}).item<double>();
    EXPECT_TRUE(live.take_train_log().empty());
    CountdownWorkload workload(task, 2);
    rl::RlLoop loop(live, *policy, workload, {2, 16, false});
    std::vector<double> out{drawn};
    for (int s = 0; s < 3; ++s) {
      const auto m = loop.run_step();
      out.push_back(m.reward_mean.value_or(-1.0));
      out.push_back(static_cast<double>(m.tokens_generated));
      out.push_back(static_cast<double>(live.take_train_log().size()));
    }
    out.push_back(live.evaluate(4));
    return out;
  };
  EXPECT_EQ(run(true), run(false));
}

TEST(LiveBackend, CheckpointResumeContinuesExactly) {
  const CountdownTask task({4, 0.6, 10}, 9);
  april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "april.alpha=2"});
  auto policy = f.registry.get("april").make(f.config);
  const auto dir = (std::filesystem::temp_directory_path() / "april_live_checkpoint").string();
  base::remove_tree(dir);
  std::vector<rl::StepMetrics> straight;
  {
    LiveBackend b(tiny_live(), task);
    CountdownWorkload w(task, 2);
    rl::RlLoop loop(b, *policy, w, {2, 16, false});
    for (int s = 0; s < 4; ++s) straight.push_back(loop.run_step());
  }
  nlohmann::json state;
  std::int64_t next = 0;
  {
    LiveBackend b(tiny_live(), task);
    CountdownWorkload w(task, 2);
    rl::RlLoop loop(b, *policy, w, {2, 16, false});
    for (int s = 0; s < 2; ++s) loop.run_step();
    b.save(dir);
    state = loop.save_state();
    next = w.next_index();
  }
  LiveBackend b(tiny_live(), task);
  b.load(dir);
  CountdownWorkload w(task, 2, next);
  rl::RlLoop loop(b, *policy, w, {2, 16, false});
  loop.load_state(state);
  for (int s = 2; s < 4; ++s) {
    const auto m = loop.run_step();
    EXPECT_EQ(m.step, s);
    EXPECT_EQ(m.tokens_generated, straight[static_cast<std::size_t>(s)].tokens_generated) << "step " << s;
    EXPECT_EQ(m.reward_mean, straight[static_cast<std::size_t>(s)].reward_mean) << "step " << s;
    EXPECT_EQ(m.tokens_offpolicy, straight[static_cast<std::size_t>(s)].tokens_offpolicy) << "step " << s;
  }
  base::remove_tree(dir);
}

// An overlapped run checkpointed between steps, with samples in flight and a
// train step just started: resumed in a new backend and loop, it continues
// exactly as the same run suspended and continued in place (the suspend
// sends in-flight samples back to re-prefill; lockstep makes timing moot).
TEST(LiveBackend, AnOverlappedRunResumesFromACheckpointAsIfSuspendedInPlace) {
  const CountdownTask task({4, 0.6, 10}, 9);
  april::testing::Fixture f("handcheck", {"cluster.mode=disaggregated", "cluster.gpus=2", "rollout_batch_size=2",
                                          "n_samples_per_prompt=2", "max_response_len=16", "async.eta=2"});
  LiveOptions o = tiny_live();
  o.train_lockstep_iterations = 3;
  const auto dir = (std::filesystem::temp_directory_path() / "april_live_overlap_checkpoint").string();
  base::remove_tree(dir);
  auto policy = f.registry.get("async").make(f.config);  // stateless: one object serves every run
  // Suspend after the first step that ends with a train step started.
  int k = 0;
  std::vector<rl::StepMetrics> in_place;
  std::int64_t held_at_suspend = 0, total_in_place = 0;
  {
    LiveBackend b(o, task);
    CountdownWorkload w(task, 2);
    rl::RlLoop loop(b, *policy, w, {2, 16, false});
    do {
      loop.run_step();
      ++k;
    } while (loop.trainer_idle() && k < 8);
    ASSERT_FALSE(loop.trainer_idle()) << "no step ended with a train step started";
    loop.suspend();
    held_at_suspend = loop.buffered_tok();
    for (int s = 0; s < 3; ++s) in_place.push_back(loop.run_step());
    total_in_place = loop.total_generated_tok();
  }
  nlohmann::json state;
  std::int64_t next = 0;
  {
    LiveBackend b(o, task);
    CountdownWorkload w(task, 2);
    rl::RlLoop loop(b, *policy, w, {2, 16, false});
    for (int s = 0; s < k; ++s) loop.run_step();
    EXPECT_THROW(b.save(dir), std::logic_error);  // samples in flight: suspend first
    EXPECT_THROW((void)loop.save_state(), std::logic_error);
    loop.suspend();
    b.save(dir);
    state = loop.save_state();
    next = w.next_index();
  }
  EXPECT_GT(held_at_suspend, 0) << "nothing was in flight or queued: the test checks little";
  LiveBackend b(o, task);
  b.load(dir);
  CountdownWorkload w(task, 2, next);
  rl::RlLoop loop(b, *policy, w, {2, 16, false});
  loop.load_state(state);
  EXPECT_EQ(loop.buffered_tok(), held_at_suspend);
  EXPECT_FALSE(loop.trainer_idle());
  for (int s = 0; s < 3; ++s) {
    const auto m = loop.run_step();
    const auto& want = in_place[static_cast<std::size_t>(s)];
    EXPECT_EQ(m.step, k + s);
    EXPECT_EQ(m.tokens_generated, want.tokens_generated) << "step " << k + s;
    EXPECT_EQ(m.tokens_trained, want.tokens_trained) << "step " << k + s;
    EXPECT_EQ(m.tokens_offpolicy, want.tokens_offpolicy) << "step " << k + s;
    EXPECT_EQ(m.staleness_token_sum, want.staleness_token_sum) << "step " << k + s;
    EXPECT_EQ(m.reward_mean, want.reward_mean) << "step " << k + s;
  }
  EXPECT_EQ(loop.total_generated_tok(), total_in_place);
  // A colocated policy refuses an overlapped run's checkpoint, by name.
  auto april_policy = f.registry.get("april").make(f.config);
  rl::RlLoop colocated(b, *april_policy, w, {2, 16, false});
  EXPECT_THROW(colocated.load_state(state), std::invalid_argument);
  base::remove_tree(dir);
}

TEST(LiveTrace, TheTwinRunsEveryDrawnGroupTheWhatIfTraceOnlyCompleteOnes) {
  const std::map<std::int64_t, std::vector<std::int32_t>> lengths = {
      {0, {5, 7}},                   // trained
      {1, {4, kUnfinishedSample}},  // buffered, one sample still running
  };                               // group 2: drawn, never returned
  const auto twin = live_trace(lengths, 3, 2, 48, LiveTraceUse::kTwin);
  ASSERT_EQ(twin.size(), 3U);
  EXPECT_EQ(twin[0].response_tok, (std::vector<std::int32_t>{5, 7}));
  EXPECT_EQ(twin[1].response_tok, (std::vector<std::int32_t>{4, 48}));  // the finished one keeps its length
  EXPECT_EQ(twin[2].response_tok, (std::vector<std::int32_t>{48, 48}));
  EXPECT_EQ(twin[2].prompt_id, CountdownTask::prompt_id(2));
  const auto whatif = live_trace(lengths, 3, 2, 48, LiveTraceUse::kWhatIf);
  ASSERT_EQ(whatif.size(), 1U);
  EXPECT_EQ(whatif[0].prompt_id, CountdownTask::prompt_id(0));
  EXPECT_EQ(whatif[0].response_tok, (std::vector<std::int32_t>{5, 7}));
}

TEST(LiveTrace, ADatasetsPromptsComeBackInTheTwinWithEachDrawsOwnLengths) {
  // Two prompts, three draws: draw 2 is prompt 0 again, with its own lengths.
  const std::map<std::int64_t, std::vector<std::int32_t>> lengths = {{0, {5, 7}}, {1, {3, 3}}, {2, {6, 9}}};
  const auto twin = live_trace(lengths, 3, 2, 48, LiveTraceUse::kTwin, 2);
  ASSERT_EQ(twin.size(), 3U);
  EXPECT_EQ(twin[2].prompt_id, CountdownTask::prompt_id(0));
  EXPECT_EQ(twin[0].response_tok, (std::vector<std::int32_t>{5, 7}));
  EXPECT_EQ(twin[2].response_tok, (std::vector<std::int32_t>{6, 9}));
  // The live task draws the same prompts in the same order.
  const CountdownTask task({4, 0.6, 10, 2}, 7);
  CountdownWorkload w(task, 2);
  for (const auto& g : twin) EXPECT_EQ(w.next_group(0).prompt_id, g.prompt_id);
}

}  // namespace
}  // namespace april::live
