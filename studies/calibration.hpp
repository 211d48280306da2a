#pragma once
// Fitting the simulator to a profiled live engine. A profile holds measured
// iterations (their shape and time), train-step times (tokens) and
// weight-sync times; calibrate() fits, by least squares on relative error
// with non-negative coefficients, the simulator's linear engine model
// (sim/iteration_model.hpp: a decode pass and a prefill pass, each with a
// fixed cost, per request, per KV token, per prefill token and per padded
// prefill token; a decode window still sums in closed form) and
//   train = base + per_tok * tokens + per_padded_tok * samples * longest,
// and reports the error on held-out points (every fourth one).
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/config.hpp"
#include "rl/backend_profile.hpp"

namespace april::studies {

// The profile a live engine measures (its iterations, train steps, syncs,
// aborts) is the backend's, in rl/backend_profile.hpp; its names stay here too.
using rl::AbortPoint;
using rl::IterationPoint;
using rl::IterationShape;
using rl::Profile;
using rl::profile_from_json;
using rl::profile_to_json;
using rl::shape_of;
using rl::times_by_shape;
using rl::TrainPoint;
using rl::TrainShape;

struct Calibration {
  double base_us = 0, per_request_us = 0, per_kv_tok_ns = 0;                                                      // decode pass
  double prefill_base_us = 0, per_prefill_request_us = 0, per_prefill_tok_us = 0, per_padded_prefill_tok_us = 0;  // prefill pass
  double train_base_s = 0, train_per_tok_us = 0, train_per_padded_tok_us = 0;
  double sync_s = 0;
  // abort = abort_latency_s + abort_per_request_us x requests held (engine.abort_*);
  // both 0 when the profile has no aborts.
  double abort_latency_s = 0, abort_per_request_us = 0;
  std::int64_t abort_points = 0;
  // The factor each relative fit (iterations, train steps) was multiplied by
  // so that its total over the points it was fitted to equals theirs; it is
  // already in the coefficients above. Above 1 where slow outliers sit above
  // the typical point.
  double iteration_sum_scale = 1.0, train_sum_scale = 1.0;
  // How much slower side by side, at least 1 (engine.slowdown_beside_train,
  // train.slowdown_beside_engines); 1 when the profile has no such points.
  // Iterations: their measured total over the model's. Train steps: the
  // median of each step's ratio to the same batch timed alone just before it
  // (train_alone_paired), else to the same shape's steps alone, else to the fit.
  double engine_slowdown_beside_train = 1.0, train_slowdown_beside_engines = 1.0;
  std::int64_t contention_points = 0;
  // Median start latency + median end latency (train.handoff_s); 0 when the profile has none.
  double train_handoff_s = 0;
  double iteration_heldout_mape = 0, train_heldout_mape = 0;  // mean absolute percentage error
  // Median |time / median of its shape's repeats - 1| over the profile: the
  // measurement noise, a floor for the held-out error.
  double iteration_noise = 0;
  std::int64_t iteration_points = 0, heldout_points = 0;
  // True when fitted to a profile here; false when read back from scenario
  // keys (calibration_from_config), which carry the coefficients only: the
  // fit's errors and abort points are then unknown, not zero.
  bool fitted = false;
};

Calibration calibrate(const Profile& profile);
// The linear model's predicted time for one iteration, seconds.
double predicted_iteration_s(const Calibration& c, const IterationPoint& it);
// The linear train model's predicted time for one step, seconds.
double predicted_train_s(const Calibration& c, const TrainPoint& t);
// One line with every coefficient (for `april calibrate` and `april validate`).
std::string describe(const Calibration& c);

// A scenario fragment: engine.iteration_model = linear and its coefficients,
// engine.abort_*, engine.slowdown_beside_train, train.time_model = linear,
// train.slowdown_beside_engines, train.handoff_s, sync.time_model = fixed; plus the fit's errors.
nlohmann::json calibration_scenario_json(const Calibration& c);
// Reads the coefficients back from a scenario holding such a fragment (engine.linear_*, engine.abort_*, train.linear_*, sync.latency_s).
Calibration calibration_from_config(const base::Config& c);

}  // namespace april::studies
