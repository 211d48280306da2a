#include "studies/tuner.hpp"

#include "base/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace april::studies {

bool Constraint::holds(double v) const {
  if (op == "<=") return v <= limit;
  if (op == "<") return v < limit;
  if (op == ">=") return v >= limit;
  return v > limit;
}

Constraint parse_constraint(const std::string& text) {
  for (const char* op : {"<=", ">=", "<", ">"}) {
    const auto pos = text.find(op);
    if (pos == std::string::npos || pos == 0) continue;
    Constraint c;
    c.metric = text.substr(0, pos);
    c.op = op;
    const std::string rhs = text.substr(pos + std::string(op).size());
    try {
      std::size_t used = 0;
      c.limit = std::stod(rhs, &used);
      if (used != rhs.size()) throw std::invalid_argument(rhs);
    } catch (const std::exception&) {
      throw std::invalid_argument(fmt::format("constraint '{}': '{}' is not a number", text, rhs));
    }
    c.text = text;
    return c;
  }
  throw std::invalid_argument(fmt::format("constraint '{}': expected METRIC<=VALUE (or <, >=, >)", text));
}

double t975(std::int64_t dof) { return base::student_t_quantile(0.975, static_cast<double>(dof)); }

std::string resolve_metric(const std::string& name, const std::map<std::string, double>& metrics) {
  for (const std::string suffix : {"", "_tok_s", "_s", "_tok"}) {
    if (metrics.count(name + suffix)) return name + suffix;
  }
  std::string known;
  for (const auto& [k, _] : metrics) known += (known.empty() ? "" : ", ") + k;
  throw std::invalid_argument(fmt::format("unknown metric '{}'; runs report: {}", name, known));
}

namespace {

void summarise(TunePoint& p, const TuneSpec& spec, const std::string& objective) {
  const auto n = static_cast<double>(p.runs.size());
  double sum = 0, sum2 = 0;
  for (const auto& r : p.runs) {
    const double v = r.at(objective);
    sum += v;
    sum2 += v * v;
  }
  p.mean = sum / n;
  const double var = p.runs.size() > 1 ? std::max(0.0, (sum2 - n * p.mean * p.mean) / (n - 1)) : 0.0;
  p.ci95 = p.runs.size() > 1 ? t975(static_cast<std::int64_t>(p.runs.size()) - 1) * std::sqrt(var / n) : 0.0;
  p.metric_means.clear();
  for (const auto& r : p.runs) {
    for (const auto& [k, v] : r) p.metric_means[k] += v / n;
  }
  p.feasible = true;
  p.violated.clear();
  for (const auto& c : spec.constraints) {
    if (!c.holds(p.metric_means.at(c.metric))) {
      p.feasible = false;
      p.violated.push_back(c.text);
    }
  }
}

// The lattice point nearest x: lo + k x lattice.
double on_lattice(const TuneSpec& spec, double x) {
  const auto g = static_cast<double>(spec.lattice);
  return spec.lo + g * std::round((x - spec.lo) / g);
}

}  // namespace

std::vector<double> first_round_values(const TuneSpec& spec) {
  std::vector<double> xs;
  const double step0 = (spec.hi - spec.lo) / static_cast<double>(std::max<std::int64_t>(1, spec.points - 1));
  for (std::int64_t i = 0; i < spec.points; ++i) {
    double x = spec.lo + step0 * static_cast<double>(i);
    if (spec.lattice > 0) x = on_lattice(spec, x);
    if (xs.empty() || x != xs.back()) xs.push_back(x);
  }
  return xs;
}

TuneResult tune(const TuneSpec& spec_in, const TuneEvaluate& evaluate) {
  TuneSpec spec = spec_in;
  if (!(spec.hi > spec.lo)) throw std::invalid_argument("tune: the range needs lo < hi");
  if (spec.points < 3) throw std::invalid_argument("tune: need at least 3 points in the first round");
  if (spec.rounds < 1 || spec.repeats < 1) throw std::invalid_argument("tune: rounds and repeats must be >= 1");
  if (spec.lattice < 0) throw std::invalid_argument("tune: the lattice step must be >= 0");
  if (spec.lattice > 0 && (spec.lo != std::round(spec.lo) || on_lattice(spec, spec.hi) != spec.hi)) {
    throw std::invalid_argument(fmt::format("tune: this key takes values lo + k x {}; the range {}:{} does not start and end on them",
                                            spec.lattice, spec.lo, spec.hi));
  }
  TuneResult res;
  std::string objective;
  const double step0 = (spec.hi - spec.lo) / static_cast<double>(spec.points - 1);
  const double eps = step0 * 1e-6;
  auto known = [&](double x) {
    return std::any_of(res.curve.begin(), res.curve.end(), [&](const TunePoint& p) { return std::fabs(p.x - x) < eps; });
  };
  auto better = [&](const TunePoint& a, const TunePoint& b) { return spec.maximize ? a.mean > b.mean : a.mean < b.mean; };
  auto run_round = [&](const std::vector<double>& xs) {
    if (xs.empty()) return;
    const auto metrics = evaluate(xs);
    const auto per = static_cast<std::size_t>(spec.repeats);
    if (metrics.size() != xs.size() * per) throw std::logic_error("tune: evaluate returned the wrong number of runs");
    if (objective.empty()) {
      objective = resolve_metric(spec.objective, metrics.front());
      for (auto& c : spec.constraints) c.metric = resolve_metric(c.metric, metrics.front());
    }
    for (std::size_t i = 0; i < xs.size(); ++i) {
      TunePoint p;
      p.x = xs[i];
      p.runs.assign(metrics.begin() + static_cast<std::ptrdiff_t>(i * per), metrics.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
      summarise(p, spec, objective);
      res.curve.push_back(std::move(p));
    }
    res.runs += static_cast<std::int64_t>(metrics.size());
    std::sort(res.curve.begin(), res.curve.end(), [](const TunePoint& a, const TunePoint& b) { return a.x < b.x; });
    res.best.reset();
    for (std::size_t i = 0; i < res.curve.size(); ++i) {
      if (res.curve[i].feasible && (!res.best || better(res.curve[i], res.curve[*res.best]))) res.best = i;
    }
  };

  run_round(first_round_values(spec));
  double step = step0;
  for (std::int64_t r = 1; r < spec.rounds && res.best; ++r) {
    step /= 2;
    const double b = res.curve[*res.best].x;
    std::vector<double> xs;
    for (double x : {b - step, b + step}) {
      if (spec.lattice > 0) {
        const auto g = static_cast<double>(spec.lattice);
        x = b + (x < b ? -1.0 : 1.0) * g * std::max(1.0, std::round(std::fabs(x - b) / g));
      }
      if (x >= spec.lo - eps && x <= spec.hi + eps && !known(x)) xs.push_back(std::clamp(x, spec.lo, spec.hi));
    }
    run_round(xs);
  }
  if (res.best) {
    const TunePoint& b = res.curve[*res.best];
    res.indistinguishable_lo = res.indistinguishable_hi = b.x;
    for (const auto& p : res.curve) {
      if (!p.feasible) continue;
      if (std::fabs(p.mean - b.mean) <= p.ci95 + b.ci95) {
        res.indistinguishable_lo = std::min(res.indistinguishable_lo, p.x);
        res.indistinguishable_hi = std::max(res.indistinguishable_hi, p.x);
      }
    }
    // The constraints that bind: those the nearest better value violates.
    const TunePoint* nearest = nullptr;
    for (const auto& p : res.curve) {
      if (better(p, b) && (!nearest || std::fabs(p.x - b.x) < std::fabs(nearest->x - b.x))) nearest = &p;
    }
    if (nearest) res.binding = nearest->violated;
  }
  return res;
}

}  // namespace april::studies
