#include <gtest/gtest.h>

#include "adapters/calibration.hpp"
#include "sim/rng.hpp"
#include "test_support.hpp"

namespace april::adapters {
namespace {

// Synthetic profile from known coefficients with 2% multiplicative noise.
Profile synthetic_profile() {
  sim::Rng rng(17, "profile-noise");
  Profile p;
  p.device = "cpu";
  p.model = "synthetic";
  p.slots = 64;
  const double base = 2e-3, per_req = 30e-6, per_kv = 5e-9, per_prefill = 40e-6;
  for (double b : {4.0, 8.0, 16.0, 32.0, 64.0}) {
    for (double prefill : {0.0, 0.0, 0.0, 64.0, 256.0, 1024.0}) {
      for (int r = 0; r < 3; ++r) {
        const double kv = b * (20 + 30 * r) + prefill;
        const double t = base + per_req * b + per_kv * kv + per_prefill * prefill;
        p.iterations.push_back({b, kv, prefill, t * (1 + rng.normal(0, 0.02))});
      }
    }
  }
  for (double tok : {500.0, 1000.0, 2000.0, 4000.0}) {
    for (int r = 0; r < 3; ++r) p.train.push_back({tok, (0.3 + 2e-4 * tok) * (1 + rng.normal(0, 0.02))});
  }
  p.sync_s = {0.011, 0.010, 0.012};
  return p;
}

TEST(Calibration, RecoversKnownCoefficientsFromNoisyProfiles) {
  const auto c = calibrate(synthetic_profile());
  EXPECT_NEAR(c.base_us, 2000, 200);
  EXPECT_NEAR(c.per_request_us, 30, 4);
  EXPECT_NEAR(c.per_prefill_tok_us, 40, 2);
  EXPECT_NEAR(c.train_base_s, 0.3, 0.05);
  EXPECT_NEAR(c.train_per_tok_us, 200, 20);
  EXPECT_DOUBLE_EQ(c.sync_s, 0.011);
  EXPECT_LT(c.iteration_heldout_mape, 0.05);
  EXPECT_GT(c.heldout_points, 0);
}

TEST(Calibration, CoefficientsStayNonNegative) {
  // y = 1 + 2x with a useless third column anti-correlated with the noise.
  std::vector<std::vector<double>> a;
  std::vector<double> y;
  for (int i = 0; i < 20; ++i) {
    a.push_back({1.0, static_cast<double>(i), static_cast<double>(i % 2)});
    y.push_back(1 + 2.0 * i - 0.3 * (i % 2));
  }
  const auto x = nonnegative_least_squares(a, y);
  EXPECT_GE(x[2], 0.0);
  EXPECT_NEAR(x[1], 2.0, 0.05);
}

TEST(Calibration, TheFragmentDrivesTheSimulatorsLinearModel) {
  const auto c = calibrate(synthetic_profile());
  april::testing::Fixture f("handcheck");
  sim::load_config_text(f.config, calibration_scenario_json(c).dump(), "model.json");
  EXPECT_EQ(f.config.get_string("engine.iteration_model"), "linear");
  const auto model = make_iteration_model(f.config);
  // 8 running, 1000 KV tokens, no prefill: 2 ms + 8 * 30 us + 1000 * 5 ns, within the fit's error.
  EXPECT_NEAR(static_cast<double>(model->iteration_ns(8, 1000, 0)), 2.245e6, 0.2e6);
  // The closed-form window equals the sum of single iterations.
  std::int64_t sum = 0;
  for (int j = 0; j < 37; ++j) sum += model->iteration_ns(8, 1000 + 8 * j, 0);
  EXPECT_EQ(model->decode_window_ns(8, 1000, 37), sum);
  const auto r = april::adapters::simulate(f.config, f.registry, "april");
  EXPECT_GT(r.summary.totals.train_time_s, 0.0);
  EXPECT_NEAR(r.summary.totals.sync_time_s, 5 * 0.011, 1e-9);
}

TEST(Calibration, BadProfilesAreClearErrors) {
  EXPECT_THROW(profile_from_json(nlohmann::json::parse(R"({"device": "cpu"})"), "p.json"), std::invalid_argument);
  try {
    profile_from_json(nlohmann::json::parse(R"({"device": "cpu", "model": "m", "slots": 4, "iterations": [], "train": [], "sync_s": []})"),
                      "p.json");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("p.json: too few measurements"), std::string::npos);
  }
}

}  // namespace
}  // namespace april::adapters
