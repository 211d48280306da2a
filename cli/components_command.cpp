// `april components`: the engine's and the trainer's cost models against
// serving and training benchmarks others published, the defaults fitted on
// them, and each row's leave-one-out error.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/program_exit.hpp"
#include "studies/component_fit.hpp"

namespace april::cli {
namespace {

constexpr const char* kUsage =
    "usage: april components [--serving FILE] [--training FILE] [--json]\n"
    "  The engine's iteration model against serving benchmarks (FILE: calibration/serving_rows.json) and\n"
    "  the trainer's phase model against training-throughput benchmarks (calibration/training_rows.json),\n"
    "  both measured and published by others (docs/published-runs.md, \"Component checks\"). Fits the\n"
    "  defaults no datasheet states on every row, prints each row's published figure, april's with that\n"
    "  fit, april's with the fit on every other row (leave-one-out) and the errors, then the fitted values\n"
    "  and the median absolute errors. The built-in defaults are these fits' values.\n"
    "  --json prints {serving: {fitted, rows}, training: {fitted, rows}} instead.\n";

nlohmann::json to_json(const studies::ComponentCheck& c) {
  nlohmann::json out = {{"fitted", nlohmann::json::object()}, {"rows", nlohmann::json::array()}};
  for (const auto& f : c.fitted) out["fitted"][f.key] = f.value;
  for (const auto& r : c.rows) {
    out["rows"].push_back({{"id", r.id},
                           {"published", r.published},
                           {"fitted", r.fitted},
                           {"left_out", r.left_out},
                           {"fitted_error", r.fitted_error()},
                           {"left_out_error", r.left_out_error()}});
  }
  out["median_abs_fitted_error"] = c.median_abs_fitted_error();
  out["median_abs_left_out_error"] = c.median_abs_left_out_error();
  return out;
}

void print_check(const char* what, const char* unit, const studies::ComponentCheck& c) {
  std::size_t w = 2;
  for (const auto& r : c.rows) w = std::max(w, r.id.size());
  fmt::print("{} ({})\n  {:<{}} {:>11} {:>11} {:>8} {:>11} {:>8}\n", what, unit, "id", w, "published", "fit, all", "error", "left out",
             "error");
  for (const auto& r : c.rows) {
    fmt::print("  {:<{}} {:>11.1f} {:>11.1f} {:>+7.1f}% {:>11.1f} {:>+7.1f}%\n", r.id, w, r.published, r.fitted, 100.0 * r.fitted_error(),
               r.left_out, 100.0 * r.left_out_error());
  }
  fmt::print("  fitted on all {} rows:", c.rows.size());
  for (const auto& f : c.fitted) fmt::print(" {}={:.4g}", f.key, f.value);
  fmt::print("\n  median absolute error: {:.1f}% with the fit on all rows, {:.1f}% left out\n\n", 100.0 * c.median_abs_fitted_error(),
             100.0 * c.median_abs_left_out_error());
}

}  // namespace

int components_command(const std::vector<std::string>& args) {
  std::string serving, training;
  bool json = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--help" || a == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    }
    if (a == "--json") {
      json = true;
    } else if (a == "--serving" || a == "--training") {
      if (i + 1 >= args.size() || args[i + 1].empty()) throw std::invalid_argument(fmt::format("{} needs a FILE\n{}", a, kUsage));
      (a == "--serving" ? serving : training) = args[++i];
    } else {
      throw std::invalid_argument(fmt::format("unknown argument '{}'\n{}", a, kUsage));
    }
  }
  if (serving.empty() && training.empty()) {
    print_error(fmt::format("april components: give --serving FILE, --training FILE or both\n{}", kUsage));
    return 2;
  }
  // Every file read and checked before any fit runs.
  const auto serving_rows = serving.empty() ? std::vector<studies::ServingRow>{} : studies::read_serving_rows(serving);
  const auto training_rows = training.empty() ? std::vector<studies::TrainingRow>{} : studies::read_training_rows(training);
  nlohmann::json out = nlohmann::json::object();
  if (!serving_rows.empty()) {
    const auto c = studies::check_engine(serving_rows);
    if (json)
      out["serving"] = to_json(c);
    else
      print_check("serving: output tokens per second of the whole server", "tok/s", c);
  }
  if (!training_rows.empty()) {
    const auto c = studies::check_trainer(training_rows);
    if (json)
      out["training"] = to_json(c);
    else
      print_check("training: tokens per second per GPU", "tok/s/GPU", c);
  }
  if (json) fmt::print("{}\n", out.dump(2));
  return 0;
}

}  // namespace april::cli
