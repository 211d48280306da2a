#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "base/rng.hpp"
#include "base/stats.hpp"
#include "sim/engine_knobs.hpp"
#include "studies/calibration.hpp"
#include "studies/calibration_check.hpp"
#include "studies/machine_drift.hpp"
#include "studies/nnls.hpp"
#include "test_support.hpp"

namespace april::studies {
namespace {

// Known coefficients of the linear engine model (seconds per unit).
constexpr double kPerRequest = 30e-6, kDecodeBase = 2e-3, kPerKv = 20e-9;
constexpr double kPrefillBase = 1e-3, kPerPrefillRequest = 300e-6, kPerPrefill = 10e-6, kPerPadded = 40e-6;

double true_time(const IterationPoint& it) {
  double t = 0;
  if (it.decode_batch() > 0) t += kDecodeBase + kPerRequest * it.decode_batch() + kPerKv * it.kv_tok;
  if (it.prefill_requests > 0) {
    t += kPrefillBase + kPerPrefillRequest * it.prefill_requests + kPerPrefill * it.prefill_tok +
         kPerPadded * it.prefill_requests * it.prefill_longest_tok;
  }
  return t;
}

// Synthetic profile in the shapes `april profile` measures, with 2% multiplicative noise.
Profile synthetic_profile() {
  base::Rng rng(17, "profile-noise");
  Profile p;
  p.device = "cpu";
  p.model = "synthetic";
  p.slots = 64;
  for (double d : {0.0, 16.0, 32.0}) {
    for (double a : {0.0, 1.0, 8.0, 16.0, 32.0}) {
      for (double longest : {3.0, 25.0, 50.0}) {
        for (bool spread : {false, true}) {
          for (int r = 0; r < 3; ++r) {
            if (d + a == 0) continue;
            IterationPoint it;
            it.prefill_requests = a;
            it.prefill_longest_tok = a > 0 ? longest : 0;
            it.prefill_tok = a * (spread && a > 1 ? (3 + longest) / 2 : longest);
            it.batch = d + a;
            it.kv_tok = d * (100 + 400 * r) + it.prefill_tok;
            it.time_s = true_time(it) * (1 + rng.normal(0, 0.02));
            p.iterations.push_back(it);
          }
        }
      }
    }
  }
  for (double samples : {8.0, 32.0, 64.0}) {
    for (double longest : {10.0, 50.0}) {
      for (bool spread : {false, true}) {
        for (int r = 0; r < 3; ++r) {
          const double tokens = samples * (spread ? (4 + longest) / 2 : longest);
          const double t = 0.3 + 2e-4 * tokens + 5e-5 * samples * longest;
          p.train.push_back({samples, tokens, longest, t * (1 + rng.normal(0, 0.02))});
        }
      }
    }
  }
  p.sync_s = {0.011, 0.010, 0.012};
  // Aborts: 20 ms + 150 us per request held, 2% noise.
  for (double requests : {1.0, 8.0, 32.0, 64.0}) {
    for (int r = 0; r < 3; ++r) p.aborts.push_back({requests, (0.02 + 150e-6 * requests) * (1 + rng.normal(0, 0.02))});
  }
  return p;
}

// Reading `j` as profile "p.json" fails with an error containing `message`.
void expect_profile_error(const nlohmann::json& j, const std::string& message) {
  try {
    profile_from_json(j, "p.json");
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Calibration, RecoversKnownCoefficientsFromNoisyProfiles) {
  const auto c = calibrate(synthetic_profile());
  EXPECT_NEAR(c.per_request_us, 30, 4);
  EXPECT_NEAR(c.base_us, 2000, 200);
  EXPECT_NEAR(c.per_kv_tok_ns, 20, 4);
  EXPECT_NEAR(c.prefill_base_us, 1000, 150);
  EXPECT_NEAR(c.per_prefill_request_us, 300, 40);
  EXPECT_NEAR(c.per_prefill_tok_us, 10, 3);
  EXPECT_NEAR(c.per_padded_prefill_tok_us, 40, 3);
  EXPECT_NEAR(c.train_base_s, 0.3, 0.05);
  EXPECT_NEAR(c.train_per_tok_us, 200, 30);
  EXPECT_NEAR(c.train_per_padded_tok_us, 50, 15);
  EXPECT_DOUBLE_EQ(c.sync_s, 0.011);
  EXPECT_LT(c.iteration_heldout_mape, 0.05);
  EXPECT_GT(c.heldout_points, 0);
  // The noise estimate sees the 2% spread between repeats of a shape.
  EXPECT_GT(c.iteration_noise, 0.005);
  EXPECT_LT(c.iteration_noise, 0.04);
  // The prediction helper agrees with the model it fitted.
  IterationPoint it;
  it.batch = 20, it.kv_tok = 400, it.prefill_requests = 4, it.prefill_tok = 60, it.prefill_longest_tok = 30;
  EXPECT_NEAR(predicted_iteration_s(c, it), true_time(it), 0.05 * true_time(it));
}

// A server's profile (`april profile --engine`) has no train steps: the
// engine's model is fitted as from any profile, the train time is zero, and
// the profile reads back through its JSON form.
TEST(Calibration, AProfileWithoutTrainStepsFitsTheEngineAlone) {
  Profile p = synthetic_profile();
  p.train.clear();
  const auto c = calibrate(profile_from_json(profile_to_json(p), "server.json"));
  EXPECT_NEAR(c.per_request_us, 30, 4);
  EXPECT_NEAR(c.base_us, 2000, 200);
  EXPECT_EQ(c.train_base_s, 0);
  EXPECT_EQ(c.train_per_tok_us, 0);
  EXPECT_EQ(c.train_per_padded_tok_us, 0);
  p.train.resize(2);  // some but too few is still refused
  EXPECT_THROW(profile_from_json(profile_to_json(p), "p.json"), base::ConfigError);
}

TEST(Calibration, ThePaddedPrefillTermRoundTripsThroughTheSimulator) {
  // The fragment's coefficients come back through a scenario (as `april validate --calibration` reads them).
  const auto c = calibrate(synthetic_profile());
  april::testing::Fixture f("handcheck");
  base::load_config_text(f.config, calibration_scenario_json(c).dump(), "model.json");
  const auto back = calibration_from_config(f.config);
  EXPECT_NEAR(back.per_padded_prefill_tok_us, c.per_padded_prefill_tok_us, 1e-9);
  EXPECT_NEAR(back.prefill_base_us, c.prefill_base_us, 1e-9);
  EXPECT_NEAR(back.per_prefill_request_us, c.per_prefill_request_us, 1e-9);
  const auto model = sim::make_iteration_model(f.config);
  // 4 admitted (60 tokens, longest 30) among 20 running: the engine model charges what the fit predicts.
  const sim::IterationShape shape{20, 400, 4, 60, 30};
  IterationPoint it;
  it.batch = 20, it.kv_tok = 400, it.prefill_requests = 4, it.prefill_tok = 60, it.prefill_longest_tok = 30;
  EXPECT_NEAR(static_cast<double>(model->iteration_ns(shape)) * 1e-9, predicted_iteration_s(c, it), 1e-6);
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
  base::load_config_text(f.config, calibration_scenario_json(c).dump(), "model.json");
  EXPECT_EQ(f.config.get_string("engine.iteration_model"), "linear");
  const auto model = sim::make_iteration_model(f.config);
  // 8 running, 1000 KV tokens, no prefill: 2 ms + 8 * 30 us + 1000 * 20 ns, within the fit's error.
  EXPECT_NEAR(static_cast<double>(model->iteration_ns(sim::decode_shape(8, 1000))), 2.26e6, 0.2e6);
  // The closed-form window equals the sum of single iterations.
  std::int64_t sum = 0;
  for (int j = 0; j < 37; ++j) sum += model->iteration_ns(sim::decode_shape(8, 1000 + 8 * j));
  EXPECT_EQ(model->decode_window_ns(8, 1000, 37), sum);
  const auto r = april::scenario::simulate(f.config, f.registry, "april");
  EXPECT_GT(r.summary.totals.train_time_s, 0.0);
  EXPECT_NEAR(r.summary.totals.sync_time_s, 5 * 0.011, 1e-9);
}

// One stalled probe must not become a model that `simulate` refuses:
// calibrate refuses it first, naming the key and the probe.
TEST(Calibration, AFitSimulateWouldRefuseIsRefusedNamingTheProbes) {
  april::testing::Fixture f("handcheck");
  const auto good = synthetic_profile();
  EXPECT_NO_THROW(check_simulate_accepts(calibrate(good), good, f.schema, "p.json"));
  const auto error_of = [&](const Profile& p) {
    try {
      check_simulate_accepts(calibrate(p), p, f.schema, "p.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto stalled = good;
  stalled.iterations[5].time_s = 1e7;
  const auto e = error_of(stalled);
  EXPECT_NE(e.find("p.json: the fit makes a model that `april simulate` would refuse"), std::string::npos) << e;
  EXPECT_NE(e.find("key 'engine.linear_"), std::string::npos) << e;
  EXPECT_NE(e.find("the profile's iterations, slowest 5 (1e+07 s)"), std::string::npos) << e;
  auto slow_train = good;
  slow_train.train[2].time_s = 1e9;
  EXPECT_NE(error_of(slow_train).find("the profile's train, slowest 2 (1e+09 s)"), std::string::npos) << error_of(slow_train);
  auto slow_sync = good;
  for (auto& s : slow_sync.sync_s) s = 1e9;
  EXPECT_NE(error_of(slow_sync).find("key 'sync.latency_s'"), std::string::npos) << error_of(slow_sync);
}

// The abort's latency and per-request cost come back from a noisy profile,
// through the profile's JSON, into the scenario keys the simulator reads.
TEST(Calibration, RecoversAKnownAbortLatency) {
  const auto c = calibrate(profile_from_json(profile_to_json(synthetic_profile()), "p.json"));
  EXPECT_EQ(c.abort_points, 12);
  EXPECT_NEAR(c.abort_latency_s, 0.02, 0.002);
  EXPECT_NEAR(c.abort_per_request_us, 150, 25);
  april::testing::Fixture f("handcheck");
  base::load_config_text(f.config, calibration_scenario_json(c).dump(), "model.json");
  EXPECT_DOUBLE_EQ(f.config.get_double("engine.abort_latency_s"), c.abort_latency_s);
  EXPECT_DOUBLE_EQ(calibration_from_config(f.config).abort_per_request_us, c.abort_per_request_us);
  // Read back from the file, it knows its coefficients but not its fit: it
  // claims neither a held-out error of 0 nor a profile without aborts.
  const std::string read_back = describe(calibration_from_config(f.config));
  EXPECT_EQ(read_back.find("held-out error"), std::string::npos) << read_back;
  EXPECT_EQ(read_back.find("has no aborts"), std::string::npos) << read_back;
  EXPECT_NE(read_back.find("read from a calibration file"), std::string::npos) << read_back;
  EXPECT_NE(describe(c).find("held-out error"), std::string::npos);
  // A profile from before aborts were probed still calibrates, with no abort cost, and says so.
  auto old = synthetic_profile();
  old.aborts.clear();
  auto j = profile_to_json(old);
  j.erase("aborts");
  const auto c0 = calibrate(profile_from_json(j, "old.json"));
  EXPECT_EQ(c0.abort_latency_s, 0.0);
  EXPECT_NE(describe(c0).find("the profile has no aborts"), std::string::npos);
  // A bad abort point is named.
  j = profile_to_json(synthetic_profile());
  j["aborts"][3]["requests"] = 0;
  expect_profile_error(j, "p.json: /aborts/3/requests: 0 is not a number in [1, ");
}

// The engine and the trainer slowing each other on one host: side-by-side
// points 10% (iterations) and 25% (train steps) slower than the alone model
// give those factors, through the profile's JSON, into the scenario keys the
// simulator reads; noise below 1 counts as no slowdown; a profile without
// such points says so; a bad point is named.
TEST(Calibration, RecoversHowMuchEngineAndTrainerSlowEachOther) {
  auto p = synthetic_profile();
  const auto alone = calibrate(p);
  for (std::size_t i = 0; i < p.iterations.size(); i += 7) {
    auto it = p.iterations[i];
    it.time_s = predicted_iteration_s(alone, it) * 1.10;
    p.iterations_beside_train.push_back(it);
  }
  // Train steps of shapes the profile did not time alone are compared with
  // the fit; one it did, with the median of its steps alone.
  for (double samples : {5.0, 20.0, 40.0})
    p.train_beside_engines.push_back({samples, samples * 20, 30, predicted_train_s(alone, {samples, samples * 20, 30, 0}) * 1.25});
  std::vector<double> same_shape;
  for (const auto& t : p.train) {
    if (t.samples == p.train[0].samples && t.tokens == p.train[0].tokens && t.longest_tok == p.train[0].longest_tok)
      same_shape.push_back(t.time_s);
  }
  ASSERT_GE(same_shape.size(), 2U);
  auto measured_shape = p.train[0];
  measured_shape.time_s = base::median(same_shape) * 1.25;
  p.train_beside_engines.push_back(measured_shape);
  p.train_beside_engines.push_back(measured_shape);
  const auto c = calibrate(profile_from_json(profile_to_json(p), "p.json"));
  EXPECT_GT(c.contention_points, 10);
  EXPECT_NEAR(c.engine_slowdown_beside_train, 1.10, 1e-9);
  EXPECT_NEAR(c.train_slowdown_beside_engines, 1.25, 1e-9);
  april::testing::Fixture f("handcheck");
  base::load_config_text(f.config, calibration_scenario_json(c).dump(), "model.json");
  EXPECT_DOUBLE_EQ(f.config.get_double("engine.slowdown_beside_train"), c.engine_slowdown_beside_train);
  EXPECT_DOUBLE_EQ(calibration_from_config(f.config).train_slowdown_beside_engines, c.train_slowdown_beside_engines);
  auto faster = synthetic_profile();
  auto t = faster.train[0];
  t.time_s = predicted_train_s(alone, t) * 0.9;
  faster.train_beside_engines.push_back(t);
  EXPECT_EQ(calibrate(faster).train_slowdown_beside_engines, 1.0);
  EXPECT_NE(describe(alone).find("x1.00 (not measured)"), std::string::npos) << describe(alone);
  auto j = profile_to_json(p);
  j["train_beside_engines"][1]["time_s"] = -1;
  expect_profile_error(j, "p.json: /train_beside_engines/1/time_s: -1 is not a number in [0, ");
}

// The engine's slowdown beside a train step is weighed by time: the twin
// multiplies every iteration beside a step by it, so it must give their
// total. Here most iterations (the small ones) run at the model's speed and
// the few large ones 1.3x slower: the median ratio would say 1.0.
TEST(Calibration, TheEnginesSlowdownBesideTrainingGivesTheTotalTimeOfItsIterations) {
  auto p = synthetic_profile();
  const auto alone = calibrate(p);
  std::vector<IterationPoint> small, large;
  for (const auto& it : p.iterations) (it.batch >= 48 ? large : small).push_back(it);
  ASSERT_GE(large.size(), 2U);
  ASSERT_GT(small.size(), large.size());
  double measured_s = 0, predicted_s = 0;
  for (auto [points, factor] : {std::pair{&small, 1.0}, std::pair{&large, 1.3}}) {
    for (auto it : *points) {
      const double pred = predicted_iteration_s(alone, it);
      it.time_s = pred * factor;
      measured_s += it.time_s;
      predicted_s += pred;
      p.iterations_beside_train.push_back(it);
    }
  }
  const auto c = calibrate(profile_from_json(profile_to_json(p), "p.json"));
  EXPECT_NEAR(c.engine_slowdown_beside_train, measured_s / predicted_s, 1e-9);
  EXPECT_GT(c.engine_slowdown_beside_train, 1.05);
}

// A shared machine's slow spells: every tenth point runs 1.5x slower, alone
// and side by side alike. The fitted models must add up to the profile's
// measured totals (the twin sums iterations and train steps; a model of the
// typical point falls short by the spells), and the spells, which hit both
// sides, must not read as a slowdown beside training.
TEST(Calibration, TheFitsAddUpToTheProfilesTotalsAndSlowSpellsAreNoSlowdown) {
  auto p = synthetic_profile();
  const auto typical = calibrate(p);
  EXPECT_NEAR(typical.iteration_sum_scale, 1.0, 0.01);
  for (std::size_t i = 0; i < p.iterations.size(); ++i) {
    auto it = p.iterations[i];
    it.time_s = predicted_iteration_s(typical, it) * (i % 10 == 0 ? 1.5 : 1.0);
    p.iterations[i] = it;
    p.iterations_beside_train.push_back(it);
  }
  for (std::size_t i = 0; i < p.train.size(); ++i) p.train[i].time_s = predicted_train_s(typical, p.train[i]) * (i % 10 == 0 ? 1.5 : 1.0);
  const auto c = calibrate(profile_from_json(profile_to_json(p), "p.json"));
  // The fitted points are those the held-out split (every 4th) leaves.
  double measured_s = 0, predicted_s = 0, train_measured_s = 0, train_predicted_s = 0;
  for (std::size_t i = 0; i < p.iterations.size(); ++i) {
    if (i % 4 == 3) continue;
    measured_s += p.iterations[i].time_s;
    predicted_s += predicted_iteration_s(c, p.iterations[i]);
  }
  for (std::size_t i = 0; i < p.train.size(); ++i) {
    if (i % 4 == 3) continue;
    train_measured_s += p.train[i].time_s;
    train_predicted_s += predicted_train_s(c, p.train[i]);
  }
  EXPECT_NEAR(predicted_s / measured_s, 1.0, 1e-9);
  EXPECT_NEAR(train_predicted_s / train_measured_s, 1.0, 1e-9);
  EXPECT_GT(c.iteration_sum_scale, 1.02);
  EXPECT_GT(c.train_sum_scale, 1.02);
  // Beside training the same spells: no slowdown (the model of the typical
  // iteration would have read them as x1.04).
  EXPECT_LT(c.engine_slowdown_beside_train, 1.01);
  EXPECT_NE(describe(c).find(fmt::format("scaled x{:.3f} to the profile's total", c.iteration_sum_scale)), std::string::npos)
      << describe(c);
}

// Pairs (a step alone, then the same batch beside the engine) win over any
// reference taken at another time: the machine drifted here, every step
// alone in the main profile ran at half the speed of the pairs' moment, and
// the slowdown must still come out as the pairs' 1.3, not 0.65.
TEST(Calibration, PairedTrainStepsGiveTheSlowdownWhateverTheMachineDidMeanwhile) {
  auto p = synthetic_profile();
  for (double samples : {5.0, 20.0, 40.0}) {
    const TrainPoint shape{samples, samples * 20, 30, 0};
    TrainPoint alone = shape, beside = shape;
    alone.time_s = 0.5 * predicted_train_s(calibrate(p), shape);
    beside.time_s = alone.time_s * 1.3;
    p.train_alone_paired.push_back(alone);
    p.train_beside_engines.push_back(beside);
  }
  const auto c = calibrate(profile_from_json(profile_to_json(p), "p.json"));
  EXPECT_NEAR(c.train_slowdown_beside_engines, 1.3, 1e-9);
  // Without the pairs the same steps beside read as faster than alone: 1.
  auto unpaired = p;
  unpaired.train_alone_paired.clear();
  EXPECT_EQ(calibrate(unpaired).train_slowdown_beside_engines, 1.0);
  // A pair with a half missing is a clear error, naming the file.
  auto j = profile_to_json(p);
  j["train_alone_paired"].erase(0);
  expect_profile_error(j, "p.json: /train_alone_paired: 2 steps against train_beside_engines' 3: they come in pairs");
}

// The handoff of an overlapped train step (waking the trainer's thread, and
// the caller after it) is the median start latency plus the median end
// latency; it goes through the file and the scenario fragment to
// train.handoff_s; a profile without latencies has none; a bad one is named.
TEST(Calibration, TheTrainHandoffIsTheMedianStartPlusTheMedianEndLatency) {
  auto p = synthetic_profile();
  EXPECT_EQ(calibrate(p).train_handoff_s, 0.0);
  p.train_start_latency_s = {0.030, 0.045, 0.040};
  p.train_end_latency_s = {0.010, 0.002};
  const auto c = calibrate(profile_from_json(profile_to_json(p), "p.json"));
  EXPECT_NEAR(c.train_handoff_s, 0.040 + 0.006, 1e-12);
  EXPECT_NE(describe(c).find("train handoff 46.0 ms"), std::string::npos) << describe(c);
  april::testing::Fixture f("handcheck");
  base::load_config_text(f.config, calibration_scenario_json(c).dump(), "model.json");
  EXPECT_DOUBLE_EQ(f.config.get_double("train.handoff_s"), c.train_handoff_s);
  EXPECT_DOUBLE_EQ(calibration_from_config(f.config).train_handoff_s, c.train_handoff_s);
  auto j = profile_to_json(p);
  j["train_end_latency_s"][1] = -0.5;
  expect_profile_error(j, "p.json: /train_end_latency_s/1: -0.5 is not a number in [0, ");
}

// How the side-by-side probes began (after another arm's turn, as validate's
// interleaved arms; or warm) goes through the file; an older profile without
// the key reads as warm, and a value that is not a boolean is named.
TEST(Calibration, TheSideBySideProbesStartIsKeptInTheFile) {
  auto p = synthetic_profile();
  EXPECT_FALSE(profile_from_json(profile_to_json(p), "p.json").side_by_side_after_other_arm);
  p.side_by_side_after_other_arm = true;
  EXPECT_TRUE(profile_from_json(profile_to_json(p), "p.json").side_by_side_after_other_arm);
  auto j = profile_to_json(p);
  j.erase("side_by_side_after_other_arm");
  EXPECT_FALSE(profile_from_json(j, "p.json").side_by_side_after_other_arm);
  j["side_by_side_after_other_arm"] = "yes";
  expect_profile_error(j, "p.json: /side_by_side_after_other_arm: a string where true or false was expected");
}

TEST(Calibration, BadProfilesAreClearErrors) {
  expect_profile_error(nlohmann::json::parse(R"({"device": "cpu"})"), "p.json: /model: missing");
  expect_profile_error(nlohmann::json::parse("[1, 2]"), "p.json: an array where an object with 'device' was expected");
  // A field missing deep inside an array is named by its whole path, never by the parser's text.
  auto deep = profile_to_json(synthetic_profile());
  deep["iterations"][37].erase("kv_tok");
  expect_profile_error(deep, "p.json: /iterations/37/kv_tok: missing");
  deep = profile_to_json(synthetic_profile());
  deep["train_beside_engines"] = nlohmann::json::array({nlohmann::json::object({{"samples", 1}, {"tokens", "many"}})});
  expect_profile_error(deep, "p.json: /train_beside_engines/0/tokens: a string where a number in [0, ");
  expect_profile_error(nlohmann::json::parse(R"({"device": "cpu", "model": "m", "slots": 4, "iterations": [], "train": [], "sync_s": []})"),
                       "p.json: too few measurements");
}

// A zero-length iteration or train step would teach the model free work: the
// profile is refused, naming the point, instead of a model written for
// `simulate` to run at infinite speed.
TEST(Calibration, ZeroLengthPointsAreRefusedNamingThem) {
  auto j = profile_to_json(synthetic_profile());
  j["iterations"][5]["time_s"] = 0.0;
  try {
    profile_from_json(j, "p.json");
    FAIL() << "accepted a zero-length iteration";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("p.json: /iterations/5/time_s: an iteration takes time > 0"), std::string::npos) << e.what();
  }
  j = profile_to_json(synthetic_profile());
  j["train"][2]["time_s"] = 0.0;
  expect_profile_error(j, "p.json: /train/2/time_s: a train step takes time > 0");
  j = profile_to_json(synthetic_profile());
  j["sync_s"][0] = -1.0;
  expect_profile_error(j, "p.json: /sync_s/0: -1.0 is not a number in [0, ");
  j = profile_to_json(synthetic_profile());
  j["iterations"][1]["kv_tok"] = std::numeric_limits<double>::infinity();  // a json value built in code may hold one
  expect_profile_error(j, "p.json: /iterations/1/kv_tok: ");
}

// A profile taken in slices tells how fast the machine ran in each: the
// slice's points against their own shapes' medians, so that the model's error
// at a shape is not read as drift, and a shape measured once says nothing.
TEST(MachineDrift, EachSlicesSlowdownIsItsPointsOverTheirShapesMedians) {
  Profile p;
  const auto iteration = [](double batch, double time_s) {
    IterationPoint it;
    it.batch = batch;
    it.kv_tok = batch;
    it.time_s = time_s;
    return it;
  };
  // Slice 0 at the machine's speed, slice 1 20% slower, slice 2 only a shape
  // measured once (a 1 s outlier that must change nothing).
  p.iterations = {iteration(8, 0.010), iteration(32, 0.040), iteration(8, 0.012), iteration(32, 0.048), iteration(64, 1.0)};
  p.train = {{8, 80, 10, 0.5}, {8, 80, 10, 0.6}};
  p.slices = {{2, 1}, {4, 2}, {5, 2}};
  const auto slow = slice_slowdowns(p);
  ASSERT_EQ(slow.size(), 3U);
  ASSERT_TRUE(slow[0] && slow[1]);
  EXPECT_FALSE(slow[2]);
  EXPECT_NEAR(*slow[1] / *slow[0], 1.2, 1e-12);
  // Relative to the whole profile's: measured over medians is 1 in all, so
  // the slices sit at 1/1.1 and 1.2/1.1.
  EXPECT_NEAR(*slow[0], 1.0 / 1.1, 1e-12);
  EXPECT_NEAR(*slow[1], 1.2 / 1.1, 1e-12);
  // A profile without slices (taken all at once) has none to tell.
  p.slices.clear();
  EXPECT_TRUE(slice_slowdowns(p).empty());
}

TEST(MachineDrift, SlicesRoundTripAndBadOnesAreClearErrors) {
  auto p = synthetic_profile();
  p.slices = {{10, 3}, {20, 3}, {static_cast<std::int64_t>(p.iterations.size()), static_cast<std::int64_t>(p.train.size())}};
  const auto back = profile_from_json(profile_to_json(p), "p.json");
  ASSERT_EQ(back.slices.size(), 3U);
  EXPECT_EQ(back.slices[1].iterations_end, 20);
  EXPECT_EQ(back.slices[2].train_end, static_cast<std::int64_t>(p.train.size()));
  auto j = profile_to_json(p);
  j["slices"][1]["iterations_end"] = 5;  // before the slice ahead of it ended
  expect_profile_error(j, "p.json: /slices/1: iterations_end 5 and train_end 3 must not decrease");
  j = profile_to_json(p);
  j["slices"][2]["train_end"] = 1000;
  expect_profile_error(j, "p.json: /slices/2: iterations_end");
  j = profile_to_json(p);
  j.erase("slices");  // profiles written before slices were recorded
  EXPECT_TRUE(profile_from_json(j, "p.json").slices.empty());
}

}  // namespace
}  // namespace april::studies
