#include "studies/published_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "base/config.hpp"
#include "base/json_file.hpp"
#include "base/run_keys.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/framework_profiles.hpp"
#include "studies/component_fields.hpp"

namespace april::studies {

std::vector<std::string> fit_metrics() { return {"step_s", "gen_s", "old_logprob_s", "ref_logprob_s", "update_s", "train_s", "sync_s"}; }

std::vector<std::string> published_metrics() {
  auto m = fit_metrics();
  m.emplace_back("speedup");
  return m;
}

namespace {

[[noreturn]] void refuse(const base::JsonFile& f, const std::string& key, const std::string& why) {
  throw base::ConfigError(fmt::format("{}: {}", f.where(key), why));
}

const nlohmann::json& object_field(const base::JsonFile& f, const nlohmann::json& parent, const std::string& key) {
  const auto it = parent.find(key);
  if (it == parent.end()) refuse(f, key, "is missing");
  if (!it->is_object()) refuse(f, key, fmt::format("expected an object, got {}", it->type_name()));
  return *it;
}

std::string string_field(const base::JsonFile& f, const nlohmann::json& parent, const std::string& key) {
  const auto it = parent.find(key);
  if (it == parent.end()) refuse(f, key, "is missing");
  if (!it->is_string()) refuse(f, key, fmt::format("expected a string, got {}", it->dump()));
  return it->get<std::string>();
}

double number_field(const base::JsonFile& f, const nlohmann::json& parent, const std::string& key) {
  const auto it = parent.find(key);
  if (it == parent.end()) refuse(f, key, "is missing");
  if (!it->is_number() || !std::isfinite(it->get<double>())) refuse(f, key, fmt::format("expected a number, got {}", it->dump()));
  return it->get<double>();
}

// The setup's scenario with the fitted inputs, then `overrides`, then the row's keys.
base::Config row_config(const PublishedSetup& s, const PublishedRow& row, const nlohmann::json& fitted,
                        const policies::PolicyRegistry& registry, const base::ConfigSchema& schema) {
  base::Config c(schema);
  scenario::apply_scenario_text(c, s.scenario.dump(), s.path + " (scenario)");
  for (auto it = fitted.begin(); it != fitted.end(); ++it) c.set_from_json(it.key(), it.value(), s.path + " (fitted)");
  for (auto it = row.set.begin(); it != row.set.end(); ++it) c.set_from_json(it.key(), it.value(), s.path + " (row " + row.name + ")");
  c.set(base::keys::kSteps, s.steps, s.path);
  scenario::validate_scenario(c);
  (void)registry.get(row.policy);
  return c;
}

// A row's run: the mean of each figure over the steps after the warm-up, and
// the accelerator it ran on.
struct RowRun {
  std::map<std::string, double> figures;
  std::string hardware;
};

RowRun run_row(const PublishedSetup& s, const PublishedRow& row, const nlohmann::json& fitted, const policies::PolicyRegistry& registry) {
  const auto schema = scenario::make_schema(registry);
  const auto c = row_config(s, row, fitted, registry, schema);
  const auto r = scenario::simulate(c, registry, row.policy);
  std::map<std::string, double> sum;
  double n = 0;
  for (std::size_t k = static_cast<std::size_t>(s.warmup_steps); k < r.steps.size(); ++k) {
    const auto& m = r.steps[k];
    const auto p = m.train_phases.value_or(rl::TrainPhases{});
    // A published speedup is a ratio of wall-clock times, whatever a step's timer holds.
    sum["wall_step_s"] += m.step_time_s;
    if (row.timers == "verl_fully_async") {
      // verl's FullyAsyncTrainer.fit (verl/experimental/fully_async_policy/
      // fully_async_trainer.py at b178a3cd, lines 316-345): each local step's
      // "step" timer holds its wait for samples ("gen": _get_samples_from_queue)
      // and its update; _trigger_parameter_sync_after_step runs after the
      // timer. MetricsAggregator (detach_utils.py, lines 249-295) sums every
      // timing_s/ figure over the local steps between two syncs. So a step is
      // from the previous sync's end to its last local step's end, and gen the
      // waits before each local step: before the first, and the gaps between
      // them (the train span less the trainer's busy time).
      const double from_s = k == 0 ? m.start_time_s : r.steps[k - 1].sync_end_s;
      sum["step_s"] += m.train_end_s - from_s;
      sum["gen_s"] += std::max(0.0, m.train_start_s - from_s) + std::max(0.0, m.train_end_s - m.train_start_s - m.train_time_s);
    } else {
      sum["step_s"] += m.step_time_s;
      sum["gen_s"] += m.rollout_time_s;
    }
    sum["old_logprob_s"] += p.old_logprob_s;
    sum["ref_logprob_s"] += p.ref_logprob_s;
    sum["update_s"] += p.update_s + p.grad_reduce_s + p.optimizer_s;
    sum["train_s"] += p.old_logprob_s + p.update_s + p.grad_reduce_s + p.optimizer_s;
    sum["sync_s"] += m.sync_time_s;
    n += 1;
  }
  for (auto& [k, v] : sum) v /= n;
  return {sum, c.get(sim::keys::kHardware)};
}

const PublishedRow& find_row(const PublishedSetup& s, const std::string& name) {
  for (const auto& r : s.rows) {
    if (r.name == name) return r;
  }
  throw base::ConfigError(fmt::format("{}: no row named '{}'", s.path, name));
}

}  // namespace

PublishedSetup read_published_setup(const std::string& path, const policies::PolicyRegistry& registry) {
  return published_setup_from_json(base::read_json_file(path, "published-run file"), registry);
}

PublishedSetup published_setup_from_json(const base::JsonFile& f, const policies::PolicyRegistry& registry) {
  PublishedSetup s;
  s.path = f.path;
  if (!f.doc.is_object()) refuse(f, "source", "expected an object with source, scenario, steps, fit and rows");
  base::json_only_fields(f, f.doc, {"source", "scenario", "steps", "warmup_steps", "fit", "rows"}, "the setup");
  s.source = object_field(f, f.doc, "source");
  (void)string_field(f, s.source, "title");
  s.scenario = object_field(f, f.doc, "scenario");
  s.steps = base::json_int(f, "steps", 2, 100000);
  s.warmup_steps = base::json_int_or(f, "warmup_steps", 1, 0, s.steps - 1);
  // A copy (a few fields): a reference from a call given a temporary key
  // reads as dangling to GCC 13 (-Wdangling-reference).
  const nlohmann::json fit = object_field(f, f.doc, "fit");
  base::json_only_fields(f, fit, {"row", "procedure", "search", "fitted"}, "fit");
  s.fit_row = string_field(f, fit, "row");
  s.fit_procedure = string_field(f, fit, "procedure");
  s.fitted = object_field(f, fit, "fitted");
  if (const auto it = fit.find("search"); it != fit.end()) {
    if (!it->is_array()) refuse(f, "search", "expected a list of {key, metric, lo, hi}");
    for (const auto& x : *it) {
      if (!x.is_object()) refuse(f, "search", "expected a list of {key, metric, lo, hi}");
      base::json_only_fields(f, x, {"key", "metric", "lo", "hi", "row"}, "a search");
      FitSearch q{string_field(f, x, "key"), string_field(f, x, "metric"), number_field(f, x, "lo"), number_field(f, x, "hi"), ""};
      if (const auto row = x.find("row"); row != x.end()) {
        if (!row->is_string()) refuse(f, "row", fmt::format("search of '{}': expected the name of the row it is fitted on", q.key));
        q.row = row->get<std::string>();
      }
      const auto metrics = fit_metrics();
      if (std::find(metrics.begin(), metrics.end(), q.metric) == metrics.end()) {
        refuse(f, "metric", fmt::format("a fit cannot match metric '{}' (one of {})", q.metric, fmt::join(metrics, ", ")));
      }
      if (!(q.lo < q.hi)) refuse(f, "lo", fmt::format("the range [{}, {}] of '{}' is empty", q.lo, q.hi, q.key));
      s.search.push_back(q);
    }
  }
  const auto rows_it = f.doc.find("rows");
  if (rows_it == f.doc.end() || !rows_it->is_array() || rows_it->empty()) refuse(f, "rows", "expected a non-empty list of rows");
  for (const auto& x : *rows_it) {
    PublishedRow r;
    if (!x.is_object()) refuse(f, "rows", "expected a list of row objects");
    r.name = string_field(f, x, "name");
    base::json_only_fields(f, x, {"name", "policy", "set", "published", "speedup_over", "quote", "timers"},
                           fmt::format("row '{}'", r.name));
    r.policy = string_field(f, x, "policy");
    if (const auto names = registry.names(); std::find(names.begin(), names.end(), r.policy) == names.end()) {
      refuse(f, "policy", fmt::format("row '{}': unknown policy '{}' (one of {})", r.name, r.policy, fmt::join(names, ", ")));
    }
    if (const auto it = x.find("set"); it != x.end()) {
      if (!it->is_object()) refuse(f, "set", fmt::format("row '{}': expected an object of scenario keys", r.name));
      r.set = *it;
      // A model not built in is named by its config.json, relative to this file.
      if (const auto m = r.set.find("model"); m != r.set.end() && m->is_string()) {
        *m = builtin_or_beside(m->get<std::string>(), std::filesystem::path(f.path).parent_path());
      }
    }
    for (const auto& [k, v] : object_field(f, x, "published").items()) {
      const auto metrics = published_metrics();
      if (std::find(metrics.begin(), metrics.end(), k) == metrics.end()) {
        refuse(f, k, fmt::format("row '{}': unknown metric '{}' (one of {})", r.name, k, fmt::join(metrics, ", ")));
      }
      if (!v.is_number() || !(v.get<double>() > 0))
        refuse(f, k, fmt::format("row '{}': expected a positive number, got {}", r.name, v.dump()));
      r.published[k] = v.get<double>();
    }
    if (r.published.empty()) refuse(f, "published", fmt::format("row '{}': publishes no figure", r.name));
    if (const auto it = x.find("speedup_over"); it != x.end()) {
      if (!it->is_string())
        refuse(f, "speedup_over", fmt::format("row '{}': expected the name of the baseline row, got {}", r.name, it->dump()));
      r.speedup_over = it->get<std::string>();
    }
    if (r.published.count("speedup") != 0 && r.speedup_over.empty()) {
      refuse(f, "speedup", fmt::format("row '{}': a speedup needs \"speedup_over\", the row it is measured against", r.name));
    }
    if (r.published.count("speedup") == 0 && !r.speedup_over.empty()) {
      refuse(f, "speedup_over", fmt::format("row '{}': names a baseline but publishes no speedup", r.name));
    }
    if (r.speedup_over == r.name) refuse(f, "speedup_over", fmt::format("row '{}': a speedup over itself", r.name));
    if (const auto it = x.find("timers"); it != x.end()) {
      if (!it->is_string() || (*it != "april" && *it != "verl_fully_async")) {
        refuse(f, "timers", fmt::format("row '{}': expected \"april\" or \"verl_fully_async\", got {}", r.name, it->dump()));
      }
      r.timers = it->get<std::string>();
    }
    if (const auto it = x.find("quote"); it != x.end()) {
      if (!it->is_string())
        refuse(f, "quote", fmt::format("row '{}': expected the row as the source prints it, got {}", r.name, it->dump()));
      r.quote = it->get<std::string>();
    }
    for (const auto& other : s.rows) {
      if (other.name == r.name) refuse(f, "name", fmt::format("row '{}' is listed twice", r.name));
    }
    s.rows.push_back(std::move(r));
  }
  (void)find_row(s, s.fit_row);
  for (const auto& q : s.search) {
    if (!q.row.empty()) (void)find_row(s, q.row);
  }
  for (const auto& r : s.rows) {
    if (r.speedup_over.empty()) continue;
    if (std::none_of(s.rows.begin(), s.rows.end(), [&](const PublishedRow& o) { return o.name == r.speedup_over; })) {
      refuse(f, "speedup_over", fmt::format("row '{}': no row named '{}'", r.name, r.speedup_over));
    }
  }
  // Every row's keys must be scenario keys that validate: checked now, not mid-run.
  const auto schema = scenario::make_schema(registry);
  for (const auto& r : s.rows) (void)row_config(s, r, s.fitted, registry, schema);
  return s;
}

std::vector<std::string> fitted_rows(const PublishedSetup& s) {
  std::vector<std::string> out = {s.fit_row};
  for (const auto& q : s.search) {
    if (!q.row.empty() && std::find(out.begin(), out.end(), q.row) == out.end()) out.push_back(q.row);
  }
  return out;
}

namespace {

// Rows a framework profile's fitted value came from: fitted in every check,
// with or without the file's own fit.
std::vector<std::string> profile_fitted_rows(const PublishedSetup& s, const policies::PolicyRegistry& registry) {
  std::vector<std::string> out;
  const auto file = std::filesystem::path(s.path).filename().string();
  const auto schema = scenario::make_schema(registry);
  for (const auto& p : sim::framework_profiles()) {
    if (p.fitted_file != file) continue;
    for (const auto& row : s.rows) {
      if (row.name == p.fitted_row && row_config(s, row, nlohmann::json::object(), registry, schema).get(sim::keys::kFramework) == p.name) {
        out.push_back(row.name);
      }
    }
  }
  return out;
}

}  // namespace

std::vector<Reproduced> reproduce(const PublishedSetup& s, const policies::PolicyRegistry& registry, bool no_fit) {
  auto fitted = no_fit ? std::vector<std::string>{} : fitted_rows(s);
  for (const auto& r : profile_fitted_rows(s, registry)) {
    if (std::find(fitted.begin(), fitted.end(), r) == fitted.end()) fitted.push_back(r);
  }
  const auto inputs = no_fit ? nlohmann::json::object() : s.fitted;
  // Every row runs once; a speedup then divides two rows' step times.
  std::map<std::string, RowRun> predicted;
  for (const auto& row : s.rows) predicted[row.name] = run_row(s, row, inputs, registry);
  std::vector<Reproduced> out;
  for (const auto& row : s.rows) {
    const auto& mine = predicted.at(row.name);
    for (const auto& [metric, published] : row.published) {
      const double value = metric == "speedup" ? predicted.at(row.speedup_over).figures.at("wall_step_s") / mine.figures.at("wall_step_s")
                                               : mine.figures.at(metric);
      out.push_back({row.name, metric, published, value, std::find(fitted.begin(), fitted.end(), row.name) != fitted.end(), mine.hardware});
    }
  }
  return out;
}

nlohmann::json fit_unknowns(const PublishedSetup& s, const policies::PolicyRegistry& registry) {
  nlohmann::json fitted = s.fitted;
  for (const auto& q : s.search) {
    const auto& row = find_row(s, q.row.empty() ? s.fit_row : q.row);
    const auto target_it = row.published.find(q.metric);
    if (target_it == row.published.end()) {
      throw base::ConfigError(fmt::format("{}: the fit row '{}' publishes no {} to fit {} on", s.path, row.name, q.metric, q.key));
    }
    const double target = target_it->second;
    const auto value_at = [&](double x) {
      nlohmann::json trial = fitted;
      trial[q.key] = x;
      return run_row(s, row, trial, registry).figures.at(q.metric);
    };
    double lo = q.lo, hi = q.hi;
    const bool rising = value_at(hi) > value_at(lo);
    for (int i = 0; i < 40 && (hi - lo) > 1e-4 * std::abs(hi); ++i) {
      const double mid = 0.5 * (lo + hi);
      const bool above = value_at(mid) > target;
      if (above == rising)
        hi = mid;
      else
        lo = mid;
    }
    fitted[q.key] = std::round(0.5 * (lo + hi) * 1e4) / 1e4;
  }
  return fitted;
}

}  // namespace april::studies
