#include <gtest/gtest.h>

#include <cmath>

#include "base/rng.hpp"
#include "sim/hardware.hpp"
#include "sim/iteration_model.hpp"
#include "sim/model_catalog.hpp"

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

// Past n or m of 2^32 floor_sum takes its 128-bit path; below, 64-bit
// unsigned arithmetic that wraps in between. Both against brute force.
TEST(FloorSum, BothPathsMatchBruteForce) {
  __extension__ typedef __int128 Wide;
  base::Rng r(4, "floor_sum paths");
  for (int t = 0; t < 2000; ++t) {
    const bool wide = t % 2 == 0;
    const auto n = static_cast<std::int64_t>(r.next_u64() % 200);
    const auto m = wide ? static_cast<std::int64_t>((std::int64_t{1} << 32) + r.next_u64() % 1000000000000ULL)
                        : static_cast<std::int64_t>(1 + r.next_u64() % 0xffffffffULL);
    const auto a = static_cast<std::int64_t>(r.next_u64() % 1000000000000000ULL);
    const auto b = static_cast<std::int64_t>(r.next_u64() % 1000000000000000ULL);
    Wide brute = 0;
    for (std::int64_t i = 0; i < n; ++i) brute += (static_cast<Wide>(a) * i + b) / m;
    ASSERT_EQ(floor_sum(n, m, a, b), static_cast<std::int64_t>(brute)) << n << " " << m << " " << a << " " << b;
  }
}

TEST(Roofline, WindowEqualsTheSumOfSingleIterations) {
  base::Rng r(5, "window");
  for (const auto& hw : builtin_accelerators()) {
    for (const std::string name : {"qwen3-4b", "r1-distill-qwen-1.5b", "qwen3-30b-a3b", "deepseek-v3"}) {
      const auto model = resolve_model(name);
      for (std::int64_t tp : {1, 2, 8}) {
        for (const std::int64_t ep : {std::int64_t{1}, tp}) {
          RooflineParams p{0.6, 0.8, 300000, tp, ep, tp == 8 ? DType::FP8 : DType::BF16, DType::BF16, false, 0.77, 5000};
          RooflineIterationModel m(hw, model, p);
          for (int t = 0; t < 20; ++t) {
            const auto batch = static_cast<std::int64_t>(1 + r.next_u64() % 512);
            const auto kv0 = static_cast<std::int64_t>(r.next_u64() % 2000000);
            const auto iters = static_cast<std::int64_t>(r.next_u64() % 400);
            std::int64_t sum = 0;
            for (std::int64_t j = 0; j < iters; ++j) sum += m.iteration_ns(batch, kv0 + j * batch, 0);
            ASSERT_EQ(m.decode_window_ns(batch, kv0, iters), sum) << hw.name << " " << name << " tp" << tp << " ep" << ep;
          }
        }
      }
    }
  }
}

const Accelerator& h100() { return builtin_accelerators()[1]; }

TEST(Roofline, DecodeIsMemoryBoundAndPrefillComputeBound) {
  ASSERT_EQ(h100().name, "h100");
  const auto qwen = resolve_model("qwen3-4b");
  RooflineIterationModel m(h100(), qwen, RooflineParams{1.0, 1.0, 0, 1});
  const double weights = 2.0 * 4022468096.0;
  // Weights 8.04 GB over 3.35 TB/s = 2.4 ms; compute for 1 token is microseconds.
  EXPECT_NEAR(static_cast<double>(m.iteration_ns(1, 0, 0)), weights / 3.35e12 * 1e9, 1.0);
  // 8192 prompt tokens: linear FLOPs 2 x (4.02e9 - 0.39e9 embedding lookup) per token, plus
  // causal attention over 8192 x 8192 / 2 pairs at 4 x 36 x 32 x 128 FLOPs each.
  const double linear = qwen.linear_flops_per_token() * 8193, attention = 4.0 * 36 * 32 * 128 * (8192.0 * 8192 / 2);
  EXPECT_NEAR(static_cast<double>(m.iteration_ns(1, 8192, 8192)), (linear + attention) / 989e12 * 1e9,
              100.0);  // femtosecond rounding over 33M pairs
  // KV reads: 36 layers * 8 heads * 128 * 2 (K, V) * 2 bytes = 147456 bytes per token.
  EXPECT_NEAR(static_cast<double>(m.iteration_ns(1, 1000000, 0) - m.iteration_ns(1, 0, 0)), 147456.0 * 1e6 / 3.35e12 * 1e9, 1.0);
}

TEST(Roofline, TensorParallelAddsItsAllReduces) {
  const auto qwen = resolve_model("qwen3-4b");
  RooflineIterationModel m(h100(), qwen, RooflineParams{1.0, 1.0, 0, 2, 1, DType::BF16, DType::BF16, false, 1.0, 5000});
  // 2 all-reduces per layer x 36 layers, 5 us each, plus 256 tokens x 2560 x 2 B x 2 (2-1)/2 per
  // all-reduce over 450 GB/s.
  const double bytes = 72.0 * 256 * 2560 * 2 * 2 * 0.5;
  EXPECT_NEAR(static_cast<double>(m.comm_ns(256)), 72 * 5000 + bytes / 450e9 * 1e9, 1.0);
  EXPECT_EQ(m.comm_ns(0), 0);
}

TEST(Roofline, MoeDecodeReadsTheExpertsItsBatchTouches) {
  const auto moe = resolve_model("qwen3-30b-a3b");
  RooflineIterationModel m(h100(), moe, RooflineParams{1.0, 1.0, 0, 1});
  const auto one = static_cast<double>(m.weights_read_ns(1)), many = static_cast<double>(m.weights_read_ns(512));
  EXPECT_NEAR(one, 2.0 * static_cast<double>(moe.active_params()) / 3.35e12 * 1e9, 1.0);
  EXPECT_NEAR(many, moe.weights_read_bytes(512, DType::BF16) / 3.35e12 * 1e9, 1.0);
  EXPECT_GT(many, 5 * one);
  EXPECT_LE(many, moe.weight_bytes(DType::BF16) / 3.35e12 * 1e9 + 1.0);
  // FP8 weights halve the bytes.
  RooflineIterationModel fp8(h100(), moe, RooflineParams{1.0, 1.0, 0, 1, 1, DType::FP8});
  EXPECT_NEAR(static_cast<double>(fp8.weights_read_ns(512)), many / 2, 1.0);
}

TEST(Roofline, RoutedExpertsReadAtTheirShareOfTheBandwidth) {
  const auto moe = resolve_model("qwen3-30b-a3b");
  RooflineParams full{1.0, 1.0, 0, 1};
  RooflineParams half = full;
  half.moe_hbm_share = 0.5;
  const RooflineIterationModel a(h100(), moe, full), b(h100(), moe, half);
  // The routed experts' bytes take twice as long; the rest (attention, embeddings) as before.
  const double expert_bytes = static_cast<double>(moe.moe_layers()) * static_cast<double>(moe.expert_params()) * 2.0;
  for (const std::int64_t tokens : {1, 16, 512}) {
    const double routed = moe.weights_read_bytes(tokens, DType::BF16) -
                          (moe.weight_bytes(DType::BF16) - static_cast<double>(moe.routed_experts) * expert_bytes);
    EXPECT_NEAR(static_cast<double>(b.weights_read_ns(tokens) - a.weights_read_ns(tokens)), routed / 3.35e12 * 1e9, 2.0) << tokens;
  }
  // A dense model has no routed experts: the share changes nothing.
  const auto dense = resolve_model("qwen3-4b");
  EXPECT_EQ(RooflineIterationModel(h100(), dense, full).weights_read_ns(64),
            RooflineIterationModel(h100(), dense, half).weights_read_ns(64));
  half.moe_hbm_share = 0;
  EXPECT_THROW(RooflineIterationModel(h100(), moe, half), std::invalid_argument);
}

TEST(Roofline, MlaKvIsWholeOnEveryGpuAndItsAttentionCountsInCompute) {
  const auto v3 = resolve_model("deepseek-v3");
  const auto& h20 = builtin_accelerators()[3];
  ASSERT_EQ(h20.name, "h20");
  RooflineIterationModel m(h20, v3, RooflineParams{1.0, 1.0, 0, 8, 8, DType::FP8});
  // 70,272 B per token read by each GPU at 4 TB/s.
  EXPECT_EQ(m.kv_read_fs_per_tok(), std::llround(70272.0 / 4.0e12 * 1e15));
  // Absorbed MLA at 4.0 TB/s and 8 x 296 TFLOP/s: 2 x 61 x 128 x (2 x 512 + 64) FLOPs per cached token
  // = 17 MFLOP, 7.2 ns on 8 GPUs, against 17.6 ns to read its 70 KB: memory-bound, but within 3x.
  const auto decode = m.iteration_ns(64, 64 * 4000, 0) - m.iteration_ns(64, 0, 0);
  EXPECT_NEAR(static_cast<double>(decode), 64 * 4000 * 70272.0 / 4.0e12 * 1e9, 1000.0);
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
