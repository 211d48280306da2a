#include "studies/component_fit.hpp"

#include <algorithm>
#include <cmath>

#include "base/stats.hpp"
#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "studies/nelder_mead.hpp"

namespace april::studies {

namespace {

// A fit's parameters live in log space (all are positive), each kept inside
// [lo, hi] by a steep penalty rather than a clamp, so the simplex feels the wall.
struct Param {
  double lo, hi, start;
};

double penalty(const std::vector<double>& x, const std::vector<Param>& params) {
  double p = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = std::exp(x[i]);
    if (v < params[i].lo) p += 1e3 * std::pow(std::log(params[i].lo / v), 2);
    if (v > params[i].hi) p += 1e3 * std::pow(std::log(v / params[i].hi), 2);
  }
  return p;
}

std::vector<double> clamp_to(const std::vector<double>& x, const std::vector<Param>& params) {
  std::vector<double> v(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) v[i] = std::clamp(std::exp(x[i]), params[i].lo, params[i].hi);
  return v;
}

// Least squares on log(predicted / published) over `use` (the rows a fit may
// see), from the params' starts.
// `restarts` more runs from the answer: Nelder-Mead may stall on a ridge.
template <typename Predict>
std::vector<double> fit(const std::vector<Param>& params, std::size_t rows, const std::vector<bool>& use, const Predict& predict,
                        const std::vector<double>& published, int restarts = 2, int evaluations = 1500, double step_size = 0.3) {
  std::vector<double> start, step;
  for (const auto& p : params) start.push_back(std::log(p.start)), step.push_back(step_size);
  const auto loss = [&](const std::vector<double>& x) {
    const auto v = clamp_to(x, params);
    double sum = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      if (use[i]) sum += std::pow(std::log(predict(i, v) / published[i]), 2);
    }
    return sum + penalty(x, params);
  };
  auto best = nelder_mead(loss, start, step, 1e-10, evaluations);
  for (int r = 0; r < restarts; ++r) best = nelder_mead(loss, best.x, step, 1e-10, evaluations);
  return clamp_to(best.x, params);
}

template <typename Predict>
ComponentCheck check(const std::vector<Param>& params, const std::vector<std::string>& keys, const std::vector<std::string>& ids,
                     const std::vector<double>& published, const Predict& predict) {
  const auto n = ids.size();
  ComponentCheck out;
  const auto all = fit(params, n, std::vector<bool>(n, true), predict, published);
  for (std::size_t k = 0; k < keys.size(); ++k) out.fitted.push_back({keys[k], all[k]});
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<bool> use(n, true);
    use[i] = false;
    auto started = params;  // from the whole fit: the same basin, fewer steps
    for (std::size_t k = 0; k < params.size(); ++k) started[k].start = all[k];
    // One row less moves the optimum a little: a short search from the whole fit's.
    const auto others = fit(started, n, use, predict, published, 0, 300, 0.05);
    out.rows.push_back({ids[i], published[i], predict(i, all), predict(i, others)});
  }
  return out;
}

double median_abs(const std::vector<ComponentPrediction>& rows, bool left_out) {
  std::vector<double> e;
  for (const auto& r : rows) e.push_back(std::abs(left_out ? r.left_out_error() : r.fitted_error()));
  return e.empty() ? 0.0 : base::median(e);
}

// Engine: compute efficiency, HBM efficiency, overhead per iteration (us),
// the routed experts' compute efficiency, the collectives' latency, the
// H20's own HBM efficiency (its rows alone), and the routed experts' share of
// the HBM bandwidth (SGLang's and vLLM's rows). Ranges: what is physical.
const std::vector<Param> kEngineParams = {{0.05, 1.0, 0.6},  {0.2, 1.0, 0.8}, {1.0, 20000.0, 500.0}, {0.02, 1.0, 0.3},
                                          {0.5, 500.0, 5.0}, {0.1, 1.0, 0.5}, {0.1, 2.0, 0.8}};
const std::vector<std::string> kEngineKeys = {
    "engine.compute_efficiency",    "engine.hbm_efficiency",     "engine.iteration_overhead_us", "engine.moe_compute_efficiency",
    "engine.collective_latency_us", "engine.h20_hbm_efficiency", "engine.moe_hbm_share"};

EngineFit engine_fit_of(const std::vector<double>& v) {
  EngineFit f;
  f.compute_efficiency = v[0];
  f.hbm_efficiency = v[1];
  f.overhead_us = v[2];
  f.moe_compute_efficiency = v[3];
  f.collective_latency_us = v[4];
  f.h20_hbm_efficiency = v[5];
  f.moe_hbm_share = v[6];
  return f;
}

// Trainer: each framework's profile (FSDP, Megatron): its matmuls' MFU and its
// HBM passes over the activations per forward; and one overhead per
// micro-batch forward (s) for both. A row is fitted with its own framework's.
const std::vector<Param> kTrainerParams = {
    {0.05, 1.0, 0.35}, {1e-3, 200.0, 10.0}, {0.05, 1.0, 0.35}, {1e-3, 200.0, 10.0}, {1e-5, 5.0, 0.01}};
const std::vector<std::string> kTrainerKeys = {"train.fsdp_mfu", "train.fsdp_activation_passes", "train.megatron_mfu",
                                               "train.megatron_activation_passes", "train.micro_batch_overhead_s"};

TrainerFit trainer_fit_of(const std::vector<double>& v, sim::TrainFramework framework) {
  const bool megatron = framework == sim::TrainFramework::Megatron;
  TrainerFit f;
  f.mfu = megatron ? v[2] : v[0];
  f.activation_passes = megatron ? v[3] : v[1];
  f.micro_batch_overhead_s = v[4];
  return f;
}

}  // namespace

double ComponentCheck::median_abs_left_out_error() const { return median_abs(rows, true); }
double ComponentCheck::median_abs_fitted_error() const { return median_abs(rows, false); }

namespace {

struct ResolvedRows {
  std::vector<sim::ModelArch> models;
  std::vector<sim::Accelerator> hw;
  std::vector<std::string> ids;
  std::vector<double> published;
};

template <typename Row>
ResolvedRows resolve(const std::vector<Row>& rows, double Row::*figure) {
  ResolvedRows r;
  for (const auto& x : rows) {
    r.models.push_back(sim::resolve_model(x.model));
    r.hw.push_back(sim::resolve_accelerator(x.accelerator));
    r.ids.push_back(x.id);
    r.published.push_back(x.*figure);
  }
  return r;
}

}  // namespace

ComponentCheck check_engine(const std::vector<ServingRow>& rows) {
  const auto r = resolve(rows, &ServingRow::output_tok_s);
  const auto predict = [&](std::size_t i, const std::vector<double>& v) {
    return predict_serving_tok_s(rows[i], r.models[i], r.hw[i], engine_fit_of(v));
  };
  return check(kEngineParams, kEngineKeys, r.ids, r.published, predict);
}

ComponentCheck check_trainer(const std::vector<TrainingRow>& rows) {
  const auto r = resolve(rows, &TrainingRow::tok_s_per_gpu);
  const auto predict = [&](std::size_t i, const std::vector<double>& v) {
    return predict_training_tok_s_per_gpu(rows[i], r.models[i], r.hw[i], trainer_fit_of(v, rows[i].framework));
  };
  return check(kTrainerParams, kTrainerKeys, r.ids, r.published, predict);
}

}  // namespace april::studies
