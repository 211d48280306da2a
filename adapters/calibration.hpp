#pragma once
// Fitting the simulator to a profiled live engine. A profile holds measured
// iteration times (batch, resident KV tokens, prefill tokens), train-step
// times (tokens) and weight-sync times; calibrate() fits, by least squares
// with non-negative coefficients,
//   iteration = base + per_request * batch + per_kv_tok * kv + per_prefill_tok * prefill
//   train     = base + per_tok * tokens
// (forms the fast-forward integrates in closed form: the linear engine model)
// and reports the error on held-out points (every fourth one).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace april::adapters {

struct IterationPoint {
  double batch = 0, kv_tok = 0, prefill_tok = 0, time_s = 0;
};
struct TrainPoint {
  double tokens = 0, time_s = 0;
};

struct Profile {
  std::string device, model;
  std::int64_t slots = 0;
  std::vector<IterationPoint> iterations;
  std::vector<TrainPoint> train;
  std::vector<double> sync_s;
};

nlohmann::json profile_to_json(const Profile& p);  // raw points plus medians and spread per configuration
Profile profile_from_json(const nlohmann::json& j, const std::string& where);

struct Calibration {
  double base_us = 0, per_request_us = 0, per_kv_tok_ns = 0, per_prefill_tok_us = 0;
  double train_base_s = 0, train_per_tok_us = 0;
  double sync_s = 0;
  double iteration_heldout_mape = 0, train_heldout_mape = 0;  // mean absolute percentage error
  std::int64_t iteration_points = 0, heldout_points = 0;
};

// Least squares min |A x - y|^2 subject to x >= 0 (active set: drop negative
// coefficients and refit). Rows of A are equations.
std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& a, const std::vector<double>& y);

Calibration calibrate(const Profile& profile);

// Quantile of a sample with linear interpolation between order statistics (q in [0, 1]); 0 when empty.
double sample_quantile(std::vector<double> values, double q);
// A scenario fragment: engine.iteration_model = linear and its coefficients,
// train.time_model = linear, sync.time_model = fixed; plus the fit's errors.
nlohmann::json calibration_scenario_json(const Calibration& c);

}  // namespace april::adapters
