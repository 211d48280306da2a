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

namespace april::studies {

// One engine iteration: `batch` running requests each gain a token; of them,
// `prefill_requests` were admitted at this boundary with `prefill_tok` context
// tokens in all, the longest `prefill_longest_tok` (a padded batched prefill
// pays for requests x longest).
struct IterationPoint {
  double batch = 0, kv_tok = 0, prefill_requests = 0, prefill_tok = 0, prefill_longest_tok = 0, time_s = 0;
  bool beside_train = false;  // a live overlapped run's: a train step computed on the same machine meanwhile
  [[nodiscard]] double decode_batch() const { return batch - prefill_requests; }
};
// One train step on `samples` samples, `tokens` prompt + response tokens in
// all, the longest sample `longest_tok` (a padded batch pays samples x longest).
struct TrainPoint {
  double samples = 0, tokens = 0, longest_tok = 0, time_s = 0;
};

// What repeats of a point share, as a map key. An iteration's: batch and
// prefill (resident KV aside: repeats of a shape differ only in it); a train
// step's: samples, tokens and longest sample.
using IterationShape = std::tuple<double, double, double, double>;
using TrainShape = std::tuple<double, double, double>;
IterationShape shape_of(const IterationPoint& it);
TrainShape shape_of(const TrainPoint& t);

// The points' times grouped by shape (iterations or train steps).
template <typename Point>
std::map<decltype(shape_of(Point{})), std::vector<double>> times_by_shape(const std::vector<Point>& points) {
  std::map<decltype(shape_of(Point{})), std::vector<double>> out;
  for (const auto& pt : points) out[shape_of(pt)].push_back(pt.time_s);
  return out;
}

// One abort: the engine held `requests` requests (running or queued) and
// took `time_s` to stop and release them all.
struct AbortPoint {
  double requests = 0, time_s = 0;
};

struct Profile {
  std::string device, model;
  std::int64_t slots = 0;
  std::vector<IterationPoint> iterations;
  std::vector<TrainPoint> train;
  std::vector<double> sync_s;
  std::vector<AbortPoint> aborts;  // optional: profiles written before aborts were probed have none
  // Optional likewise: measured with the engine and a trainer working side by
  // side on one host (as an overlapped live run has them): iterations that
  // ran while a train step computed, and train steps that ran while the
  // engine worked.
  std::vector<IterationPoint> iterations_beside_train;
  std::vector<TrainPoint> train_beside_engines;
  // Optional: the same batch's train step timed alone just before each of
  // train_beside_engines (same index), so that the slowdown is a ratio of two
  // steps taken moments apart, with the machine's drift between them small.
  std::vector<TrainPoint> train_alone_paired;
  // Optional: the wall time of an overlapped train step outside its compute.
  // Start: from handing the step to the trainer's idle thread, while the
  // engine computes, to the step's first line; end: from its last line to
  // the waiting caller's return. No time measured inside the step has them.
  // On the 2-core VM, with both sides waiting in 1 ms slices, they are
  // 0.1-0.5 ms; blocked outright, they were the host's 10-70 ms to wake a
  // halted virtual CPU (live::WorkerThread).
  std::vector<double> train_start_latency_s, train_end_latency_s;
  // Whether each side-by-side probe began after another engine and trainer
  // had their turn (as `april validate`'s interleaved policy arms do), rather
  // than with the probe's own engine and trainer warm. Optional: false.
  bool side_by_side_after_other_arm = false;
  // Optional: a profile taken in slices between other work (LiveProfiler::run,
  // as `april validate` interleaves it with the live steps): how many
  // iterations and train steps had been measured when each slice ended, so
  // that each point's slice, and the machine's speed then, can be told.
  struct Slice {
    std::int64_t iterations_end = 0, train_end = 0;
  };
  std::vector<Slice> slices;
};

nlohmann::json profile_to_json(const Profile& p);  // raw points plus medians and spread per configuration
Profile profile_from_json(const nlohmann::json& j, const std::string& where);

struct Calibration {
  double base_us = 0, per_request_us = 0, per_kv_tok_ns = 0;                         // decode pass
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
