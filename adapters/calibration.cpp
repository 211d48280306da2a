#include "adapters/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace april::adapters {
namespace {

// Solves the normal equations over the columns in `use`; others are 0.
std::vector<double> solve_subset(const std::vector<std::vector<double>>& a, const std::vector<double>& y, const std::vector<bool>& use) {
  std::vector<std::size_t> cols;
  for (std::size_t j = 0; j < use.size(); ++j) {
    if (use[j]) cols.push_back(j);
  }
  const std::size_t k = cols.size();
  std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0.0));
  for (std::size_t r = 0; r < a.size(); ++r) {
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < k; ++j) m[i][j] += a[r][cols[i]] * a[r][cols[j]];
      m[i][k] += a[r][cols[i]] * y[r];
    }
  }
  // Gaussian elimination with partial pivoting; a tiny ridge keeps it defined
  // when a column is constant (e.g. no KV variation in a profile).
  for (std::size_t i = 0; i < k; ++i) m[i][i] += 1e-12 * (1.0 + m[i][i]);
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < k; ++r) {
      if (std::fabs(m[r][c]) > std::fabs(m[piv][c])) piv = r;
    }
    std::swap(m[c], m[piv]);
    if (std::fabs(m[c][c]) < 1e-300) continue;
    for (std::size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (std::size_t j = c; j <= k; ++j) m[r][j] -= f * m[c][j];
    }
  }
  std::vector<double> x(use.size(), 0.0);
  for (std::size_t i = 0; i < k; ++i) x[cols[i]] = std::fabs(m[i][i]) < 1e-300 ? 0.0 : m[i][k] / m[i][i];
  return x;
}

double mape(const std::vector<std::vector<double>>& a, const std::vector<double>& y, const std::vector<double>& x) {
  double s = 0;
  for (std::size_t r = 0; r < a.size(); ++r) {
    double pred = 0;
    for (std::size_t j = 0; j < x.size(); ++j) pred += a[r][j] * x[j];
    s += std::fabs(pred - y[r]) / std::max(1e-12, std::fabs(y[r]));
  }
  return a.empty() ? 0.0 : s / static_cast<double>(a.size());
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

nlohmann::json spread(const std::vector<double>& v) {
  return {{"median_s", median(v)}, {"p25_s", sample_quantile(v, 0.25)}, {"p75_s", sample_quantile(v, 0.75)}, {"n", v.size()}};
}

}  // namespace

double sample_quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& a, const std::vector<double>& y) {
  if (a.empty()) throw std::invalid_argument("least squares with no equations");
  std::vector<bool> use(a.front().size(), true);
  for (;;) {
    auto x = solve_subset(a, y, use);
    bool changed = false;
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (use[j] && x[j] < 0) {
        use[j] = false;
        changed = true;
      }
    }
    if (!changed) return x;
  }
}

nlohmann::json profile_to_json(const Profile& p) {
  nlohmann::json j;
  j["device"] = p.device;
  j["model"] = p.model;
  j["slots"] = p.slots;
  j["iterations"] = nlohmann::json::array();
  std::map<std::tuple<double, double>, std::vector<double>> by_config;
  for (const auto& it : p.iterations) {
    j["iterations"].push_back({{"batch", it.batch}, {"kv_tok", it.kv_tok}, {"prefill_tok", it.prefill_tok}, {"time_s", it.time_s}});
    by_config[{it.batch, it.prefill_tok}].push_back(it.time_s);
  }
  j["iteration_summary"] = nlohmann::json::array();
  for (const auto& [k, v] : by_config) {
    auto s = spread(v);
    s["batch"] = std::get<0>(k);
    s["prefill_tok"] = std::get<1>(k);
    j["iteration_summary"].push_back(s);
  }
  j["train"] = nlohmann::json::array();
  std::map<double, std::vector<double>> by_tokens;
  for (const auto& t : p.train) {
    j["train"].push_back({{"tokens", t.tokens}, {"time_s", t.time_s}});
    by_tokens[t.tokens].push_back(t.time_s);
  }
  j["train_summary"] = nlohmann::json::array();
  for (const auto& [k, v] : by_tokens) {
    auto s = spread(v);
    s["tokens"] = k;
    j["train_summary"].push_back(s);
  }
  j["sync_s"] = p.sync_s;
  j["sync_summary"] = spread(p.sync_s);
  return j;
}

Profile profile_from_json(const nlohmann::json& j, const std::string& where) {
  Profile p;
  try {
    p.device = j.at("device").get<std::string>();
    p.model = j.at("model").get<std::string>();
    p.slots = j.at("slots").get<std::int64_t>();
    for (const auto& it : j.at("iterations")) {
      p.iterations.push_back({it.at("batch").get<double>(), it.at("kv_tok").get<double>(), it.at("prefill_tok").get<double>(),
                              it.at("time_s").get<double>()});
    }
    for (const auto& t : j.at("train")) p.train.push_back({t.at("tokens").get<double>(), t.at("time_s").get<double>()});
    p.sync_s = j.at("sync_s").get<std::vector<double>>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("{}: not a profile written by `april profile`: {}", where, e.what()));
  }
  if (p.iterations.size() < 8 || p.train.size() < 3 || p.sync_s.empty()) {
    throw std::invalid_argument(fmt::format("{}: too few measurements to fit (need 8 iterations, 3 train steps, 1 sync)", where));
  }
  return p;
}

Calibration calibrate(const Profile& p) {
  Calibration c;
  std::vector<std::vector<double>> fit_a, held_a;
  std::vector<double> fit_y, held_y;
  for (std::size_t i = 0; i < p.iterations.size(); ++i) {
    const auto& it = p.iterations[i];
    std::vector<double> row = {1.0, it.batch, it.kv_tok, it.prefill_tok};
    if (i % 4 == 3) {
      held_a.push_back(row);
      held_y.push_back(it.time_s);
    } else {
      fit_a.push_back(row);
      fit_y.push_back(it.time_s);
    }
  }
  const auto x = nonnegative_least_squares(fit_a, fit_y);
  c.base_us = x[0] * 1e6;
  c.per_request_us = x[1] * 1e6;
  c.per_kv_tok_ns = x[2] * 1e9;
  c.per_prefill_tok_us = x[3] * 1e6;
  c.iteration_heldout_mape = mape(held_a, held_y, x);
  c.iteration_points = static_cast<std::int64_t>(fit_a.size());
  c.heldout_points = static_cast<std::int64_t>(held_a.size());
  std::vector<std::vector<double>> ta, tha;
  std::vector<double> ty, thy;
  for (std::size_t i = 0; i < p.train.size(); ++i) {
    std::vector<double> row = {1.0, p.train[i].tokens};
    if (i % 4 == 3) {
      tha.push_back(row);
      thy.push_back(p.train[i].time_s);
    } else {
      ta.push_back(row);
      ty.push_back(p.train[i].time_s);
    }
  }
  const auto tx = nonnegative_least_squares(ta, ty);
  c.train_base_s = tx[0];
  c.train_per_tok_us = tx[1] * 1e6;
  c.train_heldout_mape = mape(tha, thy, tx);
  c.sync_s = median(p.sync_s);
  return c;
}

nlohmann::json calibration_scenario_json(const Calibration& c) {
  nlohmann::json j;
  j["description"] = fmt::format("calibrated by `april calibrate`: held-out error {:.1f}% (iterations), {:.1f}% (train steps)",
                                 100 * c.iteration_heldout_mape, 100 * c.train_heldout_mape);
  j["engine"] = {{"iteration_model", "linear"},
                 {"linear_base_us", c.base_us},
                 {"linear_per_request_us", c.per_request_us},
                 {"linear_per_kv_tok_ns", c.per_kv_tok_ns},
                 {"linear_per_prefill_tok_us", c.per_prefill_tok_us}};
  j["train"] = {{"time_model", "linear"}, {"linear_base_s", c.train_base_s}, {"linear_per_tok_us", c.train_per_tok_us}};
  j["sync"] = {{"time_model", "fixed"}, {"latency_s", c.sync_s}};
  return j;
}

}  // namespace april::adapters
