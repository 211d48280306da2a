// The transformer and the KV engine: decoding equals the full forward, abort and resume, batching.
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
  const auto last =
      m->prefill(torch::tensor(std::vector<std::int64_t>(seq.begin(), seq.begin() + 6)).unsqueeze(0).to(dev),
                 torch::tensor(std::vector<std::int64_t>{6}).to(dev), torch::tensor(std::vector<std::int64_t>{1}).to(dev), cache2)[0];
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
  for (auto [temperature, exact, dtype] : {std::tuple{0.0, true, torch::kFloat32},
                                           {0.0, false, torch::kFloat32},
                                           {1.0, true, torch::kFloat32},
                                           {1.0, false, torch::kFloat32},
                                           {1.0, true, torch::kBFloat16}}) {
    {
      EngineOptions o;
      // No EOS: every run is 30 tokens long, so both cuts fall mid-answer.
      o.slots = 8, o.temperature = temperature, o.top_p = 0.9, o.exact_prefill = exact, o.eos = {}, o.device = test_device();
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
        EXPECT_EQ(got, expected) << "temperature " << temperature << " exact " << exact << " " << c10::toString(dtype) << " cut "
                                 << cut_steps;
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
      o.slots = 8, o.temperature = temperature, o.exact_prefill = false, o.eos = {3}, o.device = test_device(), o.prefill_pad_tok = pad;
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

// One request aborted by its key (april serve's /abort_request by rid): a
// running one answers with what it generated, which is the start of its
// uninterrupted run; a queued one with nothing; an unknown key with nullopt;
// the others run on unchanged.
TEST(KvEngine, OneRequestIsAbortedByKeyAndTheOthersRunOn) {
  EngineOptions o;
  o.slots = 2, o.temperature = 0, o.exact_prefill = true, o.eos = {}, o.device = test_device();
  KvEngine whole(make_model(3), o);
  const auto full = run_alone(whole, {1, {1, 12, 2}, 0, 30, 0});
  const auto other_full = run_alone(whole, {2, {1, 9, 2}, 0, 30, 0});
  KvEngine e(make_model(3), o);
  e.add({1, {1, 12, 2}, 0, 30, 0});
  e.add({2, {1, 9, 2}, 0, 30, 0});
  e.add({3, {1, 5, 2}, 0, 30, 0});  // queued: two slots
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(e.step().empty());
  const auto cut = e.abort(1);
  ASSERT_TRUE(cut.has_value());
  EXPECT_FALSE(cut->finished);
  ASSERT_FALSE(cut->tokens.empty());
  EXPECT_EQ(cut->tokens, std::vector<std::int32_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut->tokens.size())));
  EXPECT_FALSE(e.abort(1).has_value());
  EXPECT_FALSE(e.abort(99).has_value());
  std::vector<std::int32_t> other;
  while (other.empty()) {
    for (auto& d : e.step()) {
      if (d.key == 2) other = d.tokens;
    }
  }
  EXPECT_EQ(other, other_full);
  const auto queued = e.abort(3);  // admitted into the freed slot meanwhile, or still queued: either way its own tokens
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(e.running() + e.waiting(), 0u);
}

// A request's own sampling: a stop token ends it (named in stop_token) and
// ignore_eos lets it run past the engine's end token.
TEST(KvEngine, ARequestsOwnStopTokensAndIgnoreEos) {
  EngineOptions o;
  o.slots = 4, o.temperature = 0, o.exact_prefill = true, o.eos = {}, o.device = test_device();
  KvEngine ref(make_model(3), o);
  const auto full = run_alone(ref, {1, {1, 12, 2}, 0, 20, 0});
  ASSERT_EQ(full.size(), 20u);
  const auto stop = full[5];
  const auto first = static_cast<std::size_t>(std::find(full.begin(), full.end(), stop) - full.begin());
  KvEngine e(make_model(3), o);
  RequestSampling s;
  s.stop_tokens = {stop};
  e.add({1, {1, 12, 2}, 0, 20, 0}, s);
  std::vector<GenResult> done;
  while (done.empty()) done = e.step();
  EXPECT_EQ(done[0].tokens, std::vector<std::int32_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(first + 1)));
  EXPECT_EQ(done[0].stop_token, stop);
  // The engine's eos is that token now; ignore_eos runs the request to max_new.
  o.eos = {stop};
  KvEngine ignoring(make_model(3), o);
  RequestSampling keep_going;
  keep_going.ignore_eos = true;
  ignoring.add({1, {1, 12, 2}, 0, 20, 0}, keep_going);
  done.clear();
  while (done.empty()) done = ignoring.step();
  EXPECT_EQ(done[0].tokens, full);
  EXPECT_EQ(done[0].stop_token, -1);
}

TEST(KvEngine, ARequestsOutputIsTheSameAloneAndInAFullBatch) {
  for (bool exact : {true, false}) {
    EngineOptions o;
    o.slots = 16, o.temperature = 1.0, o.exact_prefill = exact, o.eos = {3}, o.device = test_device();
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

// Requests admitted while others decode (april serve's case: a request arrives
// at any step) each get the tokens they get alone, whatever the slot count,
// prefill mode and temperature. A batched prefill's slots sit out that step's
// decode, which must not write over their prompts' cache.
TEST(KvEngine, RequestsAdmittedWhileOthersDecodeGetTheirOwnTokens) {
  for (std::int64_t slots : {2, 3, 8}) {
    for (bool exact : {false, true}) {
      for (double temperature : {0.0, 1.0}) {
        EngineOptions o;
        o.slots = slots, o.temperature = temperature, o.exact_prefill = exact, o.eos = {}, o.device = test_device();
        std::vector<GenRequest> requests;
        requests.push_back({1, {7, 8, 9}, 0, 40, 5});
        for (std::uint64_t k = 0; k < 10; ++k) {
          std::vector<std::int32_t> ctx = {11, 22, static_cast<std::int32_t>(3 + k), 12};
          for (std::uint64_t j = 0; j < k % 4; ++j) ctx.push_back(static_cast<std::int32_t>(4 + (j * 5 + k) % 19));
          requests.push_back({10 + k, ctx, 0, static_cast<std::int32_t>(6 + k % 5), 70 + k});
        }
        std::map<std::uint64_t, std::vector<std::int32_t>> expected;
        for (const auto& r : requests) {
          KvEngine alone(make_model(4), o);
          expected[r.key] = run_alone(alone, r);
        }
        KvEngine e(make_model(4), o);
        std::map<std::uint64_t, std::vector<std::int32_t>> got;
        std::size_t next = 0;
        for (int step = 0; got.size() < requests.size(); ++step) {
          ASSERT_LT(step, 2000);
          // One request now and then, so each lands beside running decodes.
          if (next < requests.size() && step % 3 == 0) e.add(requests[next++]);
          for (auto& d : e.step()) got[d.key] = d.tokens;
        }
        for (const auto& r : requests) {
          EXPECT_EQ(got[r.key], expected[r.key])
              << "slots " << slots << ", exact prefill " << exact << ", temperature " << temperature << ", request " << r.key;
        }
      }
    }
  }
}

}  // namespace
}  // namespace april::live
