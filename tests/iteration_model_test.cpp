#include <gtest/gtest.h>

#include "sim/iteration_model.hpp"
#include "sim/profiles.hpp"
#include "base/rng.hpp"

namespace april::sim {
namespace {

TEST(FloorSum, MatchesBruteForce) {
  base::Rng r(3, "floor_sum");
  for (int t = 0; t < 2000; ++t) {
    const auto n = static_cast<std::int64_t>(r.next_u64() % 300);
    const auto m = static_cast<std::int64_t>(1 + r.next_u64() % 2000000);
    const auto a = static_cast<std::int64_t>(r.next_u64() % 100000000000ULL);
    const auto b = static_cast<std::int64_t>(r.next_u64() % 100000000000ULL);
    std::int64_t brute = 0;
    for (std::int64_t i = 0; i < n; ++i) brute += (a * i + b) / m;
    ASSERT_EQ(floor_sum(n, m, a, b), brute) << n << " " << m << " " << a << " " << b;
  }
}

TEST(Roofline, WindowEqualsTheSumOfSingleIterations) {
  const auto hws = builtin_hardware();
  const auto models = builtin_models();
  base::Rng r(5, "window");
  for (const auto& hw : hws) {
    for (const auto& model : models) {
      for (std::int64_t tp : {1, 2, 4}) {
        RooflineIterationModel m(hw, model, RooflineParams{0.6, 0.8, 300000, tp});
        for (int t = 0; t < 20; ++t) {
          const auto batch = static_cast<std::int64_t>(1 + r.next_u64() % 512);
          const auto kv0 = static_cast<std::int64_t>(r.next_u64() % 2000000);
          const auto iters = static_cast<std::int64_t>(r.next_u64() % 400);
          std::int64_t sum = 0;
          for (std::int64_t j = 0; j < iters; ++j) sum += m.iteration_ns(batch, kv0 + j * batch, 0);
          ASSERT_EQ(m.decode_window_ns(batch, kv0, iters), sum) << hw.name << " " << model.name << " tp" << tp;
        }
      }
    }
  }
}

TEST(Roofline, DecodeIsMemoryBoundAndPrefillComputeBound) {
  const auto hws = builtin_hardware();
  const auto models = builtin_models();
  RooflineIterationModel m(find_hardware(hws, "h100"), find_model(models, "qwen3-4b"), RooflineParams{1.0, 1.0, 0, 1});
  // Weights 8.04 GB over 3.35 TB/s = 2.4 ms; compute for 1 token is microseconds.
  EXPECT_NEAR(static_cast<double>(m.iteration_ns(1, 0, 0)), 8.04e9 / 3.35e12 * 1e9, 1000.0);
  // 8192 prompt tokens: 2 * 4.02e9 * 8193 / 989e12 = 66.6 ms of compute.
  EXPECT_NEAR(static_cast<double>(m.iteration_ns(1, 0, 8192)), 2 * 4.02e9 * 8193 / 989e12 * 1e9, 1000.0);
  // KV reads: 36 layers * 8 heads * 128 * 2 (K, V) * 2 bytes = 147456 bytes per token.
  EXPECT_NEAR(static_cast<double>(m.iteration_ns(1, 1000000, 0) - m.iteration_ns(1, 0, 0)), 147456.0 * 1e6 / 3.35e12 * 1e9,
              1000.0);
}

TEST(Linear, ChargesEachPassOnlyWhenItRunsWithItsTermsByHand) {
  LinearIterationParams p;
  p.base_ns = 100000, p.per_request_ns = 2000, p.per_kv_tok_ps = 500;
  p.prefill_base_ns = 30000, p.per_prefill_request_ns = 7000, p.per_prefill_tok_ns = 100, p.per_padded_prefill_tok_ns = 300;
  const LinearIterationModel m(p);
  // Decode only: 8 requests, 1000 KV tokens.
  EXPECT_EQ(m.iteration_ns(decode_shape(8, 1000)), 100000 + 8 * 2000 + 500);
  // Prefill only: 3 admitted, 40 context tokens, the longest 20 (padded to 60).
  EXPECT_EQ(m.iteration_ns(IterationShape{3, 40, 3, 40, 20}), 30000 + 3 * 7000 + 40 * 100 + 60 * 300);
  // Both: 5 decode among 8, 3 admitted as above.
  EXPECT_EQ(m.iteration_ns(IterationShape{8, 1040, 3, 40, 20}), (100000 + 5 * 2000 + 520) + (30000 + 3 * 7000 + 4000 + 18000));
  // A decode window sums its iterations exactly.
  std::int64_t sum = 0;
  for (std::int64_t j = 0; j < 7; ++j) sum += m.iteration_ns(decode_shape(8, 1000 + 8 * j));
  EXPECT_EQ(m.decode_window_ns(8, 1000, 7), sum);
}

TEST(Constant, IgnoresBatchAndKv) {
  ConstantIterationModel m(1000000);
  EXPECT_EQ(m.iteration_ns(1, 0, 0), 1000000);
  EXPECT_EQ(m.iteration_ns(500, 1 << 20, 4096), 1000000);
  EXPECT_EQ(m.decode_window_ns(7, 100, 13), 13000000);
}

}  // namespace
}  // namespace april::sim
