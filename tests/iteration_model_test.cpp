#include <gtest/gtest.h>

#include "sim/iteration_model.hpp"
#include "sim/profiles.hpp"
#include "sim/rng.hpp"

namespace april::sim {
namespace {

TEST(FloorSum, MatchesBruteForce) {
  Rng r(3, "floor_sum");
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
  Rng r(5, "window");
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

TEST(Constant, IgnoresBatchAndKv) {
  ConstantIterationModel m(1000000);
  EXPECT_EQ(m.iteration_ns(1, 0, 0), 1000000);
  EXPECT_EQ(m.iteration_ns(500, 1 << 20, 4096), 1000000);
  EXPECT_EQ(m.decode_window_ns(7, 100, 13), 13000000);
}

}  // namespace
}  // namespace april::sim
