#include "studies/calibration.hpp"

#include "base/stats.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/train_sync_knobs.hpp"
#include "studies/nnls.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace april::studies {
namespace {

double mape(const std::vector<std::vector<double>>& a, const std::vector<double>& y, const std::vector<double>& x) {
  double s = 0;
  for (std::size_t r = 0; r < a.size(); ++r) {
    double pred = 0;
    for (std::size_t j = 0; j < x.size(); ++j) pred += a[r][j] * x[j];
    s += std::fabs(pred - y[r]) / std::max(1e-12, std::fabs(y[r]));
  }
  return a.empty() ? 0.0 : s / static_cast<double>(a.size());
}

// What the relative fit's prediction must be multiplied by for its total
// over the points it was fitted to to equal their measured total. The
// relative fit centres on the typical point; a shared machine's slow spells
// put a few points far above it and none far below, so its total falls short
// (2-4% over the alone iterations of the 24-step validations of 2026-11-23),
// and the twin adds times up: a colocated run's time is the sum of its
// iterations and train steps. 1 when the fit predicts nothing.
double sum_scale(const std::vector<std::vector<double>>& rows, const std::vector<double>& times_s, const std::vector<double>& x) {
  double measured_s = 0, predicted_s = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    measured_s += times_s[r];
    predicted_s += std::inner_product(x.begin(), x.end(), rows[r].begin(), 0.0);
  }
  return predicted_s > 0 ? measured_s / predicted_s : 1.0;
}

// A linear model fitted by non-negative least squares on relative error
// (each row divided by its time), so cheap and expensive points count alike
// and a slow outlier weighs less; every fourth point (by index) held out,
// points without a positive time skipped; the coefficients multiplied by
// their sum_scale. `empty_error`, where given, is thrown when either the
// fitted or the held-out set is empty.
struct RelativeFit {
  std::vector<double> x;
  double sum_scale = 1.0, heldout_mape = 0;
  std::int64_t fit_points = 0, heldout_points = 0;
};
RelativeFit fit_relative(const std::vector<std::vector<double>>& rows, const std::vector<double>& times_s, const char* empty_error) {
  std::vector<std::vector<double>> fit_a, held_a, fit_rows;
  std::vector<double> fit_y, held_y, fit_times;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!(times_s[i] > 0)) continue;
    if (i % 4 == 3) {
      held_a.push_back(rows[i]);
      held_y.push_back(times_s[i]);
      continue;
    }
    fit_rows.push_back(rows[i]);
    fit_times.push_back(times_s[i]);
    auto relative = rows[i];
    for (auto& v : relative) v /= times_s[i];
    fit_a.push_back(std::move(relative));
    fit_y.push_back(1.0);
  }
  if (empty_error && (fit_a.empty() || held_a.empty())) throw std::invalid_argument(empty_error);
  RelativeFit f;
  f.x = nonnegative_least_squares(fit_a, fit_y);
  f.sum_scale = sum_scale(fit_rows, fit_times, f.x);
  for (auto& v : f.x) v *= f.sum_scale;
  f.heldout_mape = mape(held_a, held_y, f.x);
  f.fit_points = static_cast<std::int64_t>(fit_a.size());
  f.heldout_points = static_cast<std::int64_t>(held_a.size());
  return f;
}

}  // namespace

namespace {

// The linear engine model's features (sim::LinearIterationModel), in the
// order of the coefficients below, which are seconds per unit.
using IterationFeatures = std::array<double, 7>;
IterationFeatures iteration_features(const IterationPoint& it) {
  const bool decodes = it.decode_batch() > 0, prefills = it.prefill_requests > 0;
  return {decodes ? 1.0 : 0.0,
          it.decode_batch(),
          decodes ? it.kv_tok : 0.0,
          prefills ? 1.0 : 0.0,
          it.prefill_requests,
          it.prefill_tok,
          it.prefill_requests * it.prefill_longest_tok};
}

}  // namespace

double predicted_iteration_s(const Calibration& c, const IterationPoint& it) {
  const IterationFeatures f = iteration_features(it);
  const IterationFeatures x = {c.base_us * 1e-6,
                               c.per_request_us * 1e-6,
                               c.per_kv_tok_ns * 1e-9,
                               c.prefill_base_us * 1e-6,
                               c.per_prefill_request_us * 1e-6,
                               c.per_prefill_tok_us * 1e-6,
                               c.per_padded_prefill_tok_us * 1e-6};
  return std::inner_product(f.begin(), f.end(), x.begin(), 0.0);
}

double predicted_train_s(const Calibration& c, const TrainPoint& t) {
  return c.train_base_s + c.train_per_tok_us * 1e-6 * t.tokens + c.train_per_padded_tok_us * 1e-6 * t.samples * t.longest_tok;
}

Calibration calibrate(const Profile& p) {
  Calibration c;
  c.fitted = true;
  std::vector<std::vector<double>> rows;
  std::vector<double> times_s;
  for (const auto& it : p.iterations) {
    const auto features = iteration_features(it);
    rows.emplace_back(features.begin(), features.end());
    times_s.push_back(it.time_s);
  }
  const auto fit = fit_relative(rows, times_s, "profile: no iteration with a positive time");
  const auto& x = fit.x;
  c.iteration_sum_scale = fit.sum_scale;
  c.base_us = x[0] * 1e6;
  c.per_request_us = x[1] * 1e6;
  c.per_kv_tok_ns = x[2] * 1e9;
  c.prefill_base_us = x[3] * 1e6;
  c.per_prefill_request_us = x[4] * 1e6;
  c.per_prefill_tok_us = x[5] * 1e6;
  c.per_padded_prefill_tok_us = x[6] * 1e6;
  c.iteration_heldout_mape = fit.heldout_mape;
  c.iteration_points = fit.fit_points;
  c.heldout_points = fit.heldout_points;
  // Noise: each point against the median of the points of its shape (KV aside).
  std::vector<double> deviations;
  for (const auto& [shape, times] : times_by_shape(p.iterations)) {
    if (times.size() < 2) continue;
    const double m = base::median(times);
    for (double t : times) deviations.push_back(std::fabs(t / m - 1.0));
  }
  c.iteration_noise = base::median(deviations);
  std::vector<std::vector<double>> train_rows;
  std::vector<double> train_times_s;
  for (const auto& t : p.train) {
    train_rows.push_back({1.0, t.tokens, t.samples * t.longest_tok});
    train_times_s.push_back(t.time_s);
  }
  // A server's profile (`april profile --engine`) has no train steps: its
  // trainer is not the server's, and its train time is left at zero.
  if (!p.train.empty()) {
    const auto train_fit = fit_relative(train_rows, train_times_s, nullptr);
    c.train_sum_scale = train_fit.sum_scale;
    c.train_base_s = train_fit.x[0];
    c.train_per_tok_us = train_fit.x[1] * 1e6;
    c.train_per_padded_tok_us = train_fit.x[2] * 1e6;
    c.train_heldout_mape = train_fit.heldout_mape;
  }
  c.sync_s = p.sync_s.empty() ? 0.0 : base::median(p.sync_s);  // a server profiled without a weight load
  if (!p.aborts.empty()) {
    // abort = latency + per_request x requests, fitted on absolute error: an
    // abort of few requests takes microseconds, and relative error would let
    // their noise decide the per-request cost.
    std::vector<std::vector<double>> aa;
    std::vector<double> ay;
    for (const auto& a : p.aborts) {
      aa.push_back({1.0, a.requests});
      ay.push_back(a.time_s * 1e6);  // in us: well scaled for the solver
    }
    const auto ax = nonnegative_least_squares(aa, ay);
    c.abort_latency_s = ax[0] * 1e-6;
    c.abort_per_request_us = ax[1];
    c.abort_points = static_cast<std::int64_t>(p.aborts.size());
  }
  // A model that predicts no time for an iteration or a train step that was
  // measured would simulate free work: refuse it, naming the point, rather
  // than write a model that `simulate` runs at infinite speed.
  for (std::size_t i = 0; i < p.iterations.size(); ++i) {
    const double t = predicted_iteration_s(c, p.iterations[i]);
    if (!(std::isfinite(t) && t > 0)) {
      throw std::invalid_argument(
          fmt::format("the fit predicts {} s for iteration {} (measured {} s): the profile cannot determine "
                      "the model; profile more shapes",
                      t, i, p.iterations[i].time_s));
    }
  }
  for (std::size_t i = 0; i < p.train.size(); ++i) {
    const auto& t = p.train[i];
    const double pred = predicted_train_s(c, t);
    if (!(std::isfinite(pred) && pred > 0)) {
      throw std::invalid_argument(
          fmt::format("the fit predicts {} s for train step {} (measured {} s): profile more train steps", pred, i, t.time_s));
    }
  }
  // Side by side: how much slower than the fitted (alone) model; below 1 is
  // noise (nothing speeds up beside more work). For iterations, their time
  // over the model's, summed: the twin multiplies every iteration beside a
  // train step by it, and what it must get right is their total. Large
  // iterations (a wave's prefill, its full decodes) are slowed more than the
  // small ones at its tail: the median iteration's ratio read x1.05 where the
  // sums read x1.10 (2026-11-23, 2-core machine), and the live rollouts beside
  // a train step ran x1.10-1.18 in sum. The model is scaled to the alone
  // points' total (sum_scale), so the machine's slow spells, which land on
  // both sides, are not counted again here as slowdown.
  {
    double measured_s = 0, predicted_s = 0;
    for (const auto& it : p.iterations_beside_train) {
      if (const double pred = predicted_iteration_s(c, it); pred > 0) {
        measured_s += it.time_s;
        predicted_s += pred;
      }
    }
    if (predicted_s > 0) c.engine_slowdown_beside_train = std::max(1.0, measured_s / predicted_s);
  }
  {
    // Best, each step beside the engine against the same batch timed alone
    // just before it (train_alone_paired): the machine drifts by as much as
    // the effect between steps timed minutes apart. Without pairs, against
    // the same shape's steps alone where the profile has them (the linear
    // train model can be off by more than the slowdown for one shape), else
    // against the fit.
    std::vector<double> r;
    if (!p.train_alone_paired.empty() && p.train_alone_paired.size() == p.train_beside_engines.size()) {
      for (std::size_t i = 0; i < p.train_beside_engines.size(); ++i) {
        if (p.train_alone_paired[i].time_s > 0) r.push_back(p.train_beside_engines[i].time_s / p.train_alone_paired[i].time_s);
      }
    } else {
      const auto alone = times_by_shape(p.train);
      for (const auto& t : p.train_beside_engines) {
        const auto it = alone.find(shape_of(t));
        const double ref = it != alone.end() ? base::median(it->second) : predicted_train_s(c, t);
        if (ref > 0) r.push_back(t.time_s / ref);
      }
    }
    if (!r.empty()) c.train_slowdown_beside_engines = std::max(1.0, base::median(r));
  }
  c.contention_points = static_cast<std::int64_t>(p.iterations_beside_train.size() + p.train_beside_engines.size());
  for (const auto* v : {&p.train_start_latency_s, &p.train_end_latency_s}) {
    if (!v->empty()) c.train_handoff_s += base::median(*v);
  }
  return c;
}

nlohmann::json calibration_scenario_json(const Calibration& c) {
  nlohmann::json j;
  j["description"] = fmt::format(
      "calibrated by `april calibrate`: held-out error {:.1f}% (iterations; measurement noise {:.1f}%), {:.1f}% (train steps); "
      "fits scaled x{:.3f} (iterations) and x{:.3f} (train steps) to the profile's totals",
      100 * c.iteration_heldout_mape, 100 * c.iteration_noise, 100 * c.train_heldout_mape, c.iteration_sum_scale, c.train_sum_scale);
  j["engine"] = {{"iteration_model", "linear"},
                 {"linear_base_us", c.base_us},
                 {"linear_per_request_us", c.per_request_us},
                 {"linear_per_kv_tok_ns", c.per_kv_tok_ns},
                 {"linear_prefill_base_us", c.prefill_base_us},
                 {"linear_per_prefill_request_us", c.per_prefill_request_us},
                 {"linear_per_prefill_tok_us", c.per_prefill_tok_us},
                 {"linear_per_padded_prefill_tok_us", c.per_padded_prefill_tok_us},
                 {"abort_latency_s", c.abort_latency_s},
                 {"abort_per_request_us", c.abort_per_request_us},
                 {"slowdown_beside_train", c.engine_slowdown_beside_train}};
  j["train"] = {{"time_model", "linear"},
                {"linear_base_s", c.train_base_s},
                {"linear_per_tok_us", c.train_per_tok_us},
                {"linear_per_padded_tok_us", c.train_per_padded_tok_us},
                {"slowdown_beside_engines", c.train_slowdown_beside_engines},
                {"handoff_s", c.train_handoff_s}};
  j["sync"] = {{"time_model", "fixed"}, {"latency_s", c.sync_s}};
  return j;
}

}  // namespace april::studies

namespace april::studies {

Calibration calibration_from_config(const base::Config& k) {
  Calibration c;
  c.base_us = k.get(sim::keys::kEngineLinearBaseUs);
  c.per_request_us = k.get(sim::keys::kEngineLinearPerRequestUs);
  c.per_kv_tok_ns = k.get(sim::keys::kEngineLinearPerKvTokNs);
  c.prefill_base_us = k.get(sim::keys::kEngineLinearPrefillBaseUs);
  c.per_prefill_request_us = k.get(sim::keys::kEngineLinearPerPrefillRequestUs);
  c.per_prefill_tok_us = k.get(sim::keys::kEngineLinearPerPrefillTokUs);
  c.per_padded_prefill_tok_us = k.get(sim::keys::kEngineLinearPerPaddedPrefillTokUs);
  c.train_base_s = k.get(sim::keys::kTrainLinearBaseS);
  c.train_per_tok_us = k.get(sim::keys::kTrainLinearPerTokUs);
  c.train_per_padded_tok_us = k.get(sim::keys::kTrainLinearPerPaddedTokUs);
  c.sync_s = k.get(sim::keys::kSyncLatencyS);
  c.engine_slowdown_beside_train = k.get(sim::keys::kEngineSlowdownBesideTrain);
  c.train_slowdown_beside_engines = k.get(sim::keys::kTrainSlowdownBesideEngines);
  c.train_handoff_s = k.get(sim::keys::kTrainHandoffS);
  c.abort_latency_s = k.get(sim::keys::kEngineAbortLatencyS);
  c.abort_per_request_us = k.get(sim::keys::kEngineAbortPerRequestUs);
  return c;
}

std::string describe(const Calibration& c) {
  // A calibration read back from a file knows its coefficients, not how well they fit.
  const std::string fit = c.fitted
                              ? fmt::format(" (held-out error {:.1f}%, measurement noise {:.1f}%, scaled x{:.3f} to the profile's total)",
                                            100 * c.iteration_heldout_mape, 100 * c.iteration_noise, c.iteration_sum_scale)
                              : "";
  const std::string train_fit = c.fitted ? fmt::format(" (scaled x{:.3f} to the profile's total)", c.train_sum_scale) : "";
  return fmt::format(
      "iteration: decode pass {:.1f} us + {:.2f} us/request + {:.4f} ns/KV token; prefill pass {:.1f} us + {:.2f} us/request + {:.3f} "
      "us/token + "
      "{:.3f} us/padded token{}; train {:.3f} s + {:.3f} us/token + {:.3f} us/padded token{}; "
      "sync {:.4f} s; abort {:.6f} s + {:.3f} us/request{}; side by side, iterations x{:.2f} and train steps x{:.2f}{}, "
      "train handoff {:.1f} ms{}",
      c.base_us, c.per_request_us, c.per_kv_tok_ns, c.prefill_base_us, c.per_prefill_request_us, c.per_prefill_tok_us,
      c.per_padded_prefill_tok_us, fit, c.train_base_s, c.train_per_tok_us, c.train_per_padded_tok_us, train_fit, c.sync_s,
      c.abort_latency_s, c.abort_per_request_us, c.fitted && c.abort_points == 0 ? " (the profile has no aborts)" : "",
      c.engine_slowdown_beside_train, c.train_slowdown_beside_engines, c.fitted && c.contention_points == 0 ? " (not measured)" : "",
      1e3 * c.train_handoff_s, c.fitted ? "" : " (read from a calibration file)");
}

}  // namespace april::studies
