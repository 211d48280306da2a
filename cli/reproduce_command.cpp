// `april reproduce`: published runs against april's predictions.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "base/stats.hpp"
#include "cli/commands.hpp"
#include "cli/program_exit.hpp"
#include "policies/registry.hpp"
#include "studies/published_runs.hpp"

namespace april::cli {
namespace {

constexpr const char* kUsage =
    "usage: april reproduce FILE... [--json] [--fit | --no-fit]\n"
    "  Each FILE holds a published setup in scenario keys, its source, the inputs the source does not state\n"
    "  (fitted on one row) and the measured rows (docs/published-runs.md). Prints every published figure\n"
    "  beside april's prediction and the relative error; the fitted row is marked, every other row is a\n"
    "  prediction. A speedup is the step time of the row's speedup_over row over its own. Ends with the\n"
    "  median absolute error of every prediction and of the step times and speedups alone, and of these\n"
    "  by the rows' accelerators, with how many of each one's step times came out shorter than published;\n"
    "  and in how many speedups the faster run is the published one, and april's speedup the smaller.\n"
    "  --json prints a list of {source, row, metric, published, predicted, error, fitted_row, hardware}.\n"
    "  --fit runs the file's searches on its fit row and prints the values its \"fitted\" object should hold.\n"
    "  --no-fit ignores every fitted value: each row runs on the defaults and what the source states, as a\n"
    "  prediction for a cluster that has not run yet; only the row a framework profile's fitted value came\n"
    "  from (framework: verl-fsdp2, ...) counts as fitted.\n";

// "what: N figures, median absolute error X%, largest Y%" over |relative errors|.
void print_error_summary(const char* what, const std::vector<double>& errors) {
  if (errors.empty()) return;
  fmt::print("  {}: {} figure{}, median absolute error {:.1f}%, largest {:.1f}%\n", what, errors.size(), errors.size() == 1 ? "" : "s",
             100.0 * base::median(errors), 100.0 * *std::max_element(errors.begin(), errors.end()));
}

struct ReproduceOptions {
  std::vector<std::string> files;
  bool help = false, json = false, fit = false, no_fit = false;
};

// Stops at --help, so that the usage is printed whatever follows it.
ReproduceOptions parse_reproduce(const std::vector<std::string>& args) {
  ReproduceOptions o;
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      o.help = true;
      return o;
    }
    if (a == "--json")
      o.json = true;
    else if (a == "--fit")
      o.fit = true;
    else if (a == "--no-fit")
      o.no_fit = true;
    else if (!a.empty() && a[0] == '-')
      throw std::invalid_argument(fmt::format("unknown option '{}'\n{}", a, kUsage));
    else
      o.files.push_back(a);
  }
  return o;
}

// One accelerator's step times and speedups, and which way its step times err.
struct AcceleratorTally {
  std::vector<double> goal_errors;
  std::size_t steps = 0, steps_short = 0;
};

// The |relative errors| of the predictions, of the goal's figures (step times
// and speedups) alone, and how often a speedup picked the faster run; the
// goal's figures by the rows' accelerators too.
struct ErrorTally {
  std::vector<double> errors, goal_errors;
  std::size_t speedups = 0, winners_right = 0, speedups_below = 0;  // below: april's speedup under the published one
  std::map<std::string, AcceleratorTally> by_accelerator;

  void add(const ErrorTally& t) {
    errors.insert(errors.end(), t.errors.begin(), t.errors.end());
    goal_errors.insert(goal_errors.end(), t.goal_errors.begin(), t.goal_errors.end());
    speedups += t.speedups;
    winners_right += t.winners_right;
    speedups_below += t.speedups_below;
    for (const auto& [hw, a] : t.by_accelerator) {
      auto& mine = by_accelerator[hw];
      mine.goal_errors.insert(mine.goal_errors.end(), a.goal_errors.begin(), a.goal_errors.end());
      mine.steps += a.steps;
      mine.steps_short += a.steps_short;
    }
  }
};

void print_tally(const ErrorTally& t) {
  print_error_summary("predictions", t.errors);
  print_error_summary("step times and speedups", t.goal_errors);
  if (t.speedups > 0) {
    fmt::print("  faster run right in {} of {} speedups; april's speedup below the published one in {}\n", t.winners_right, t.speedups,
               t.speedups_below);
  }
  // An accelerator's step times may all err one way, which the median hides.
  if (t.by_accelerator.size() > 1) {
    for (const auto& [hw, a] : t.by_accelerator) {
      if (a.goal_errors.empty()) continue;
      fmt::print(
          "  on {}: {} step times and speedups, median absolute error {:.1f}%; april's step time shorter than published in {} of {}\n", hw,
          a.goal_errors.size(), 100.0 * base::median(a.goal_errors), a.steps_short, a.steps);
    }
  }
}

void append_json_rows(nlohmann::json& all, const studies::PublishedSetup& s, const std::vector<studies::Reproduced>& results) {
  for (const auto& r : results) {
    all.push_back({{"source", s.source.value("title", s.path)},
                   {"row", r.row},
                   {"metric", r.metric},
                   {"published", r.published},
                   {"predicted", r.predicted},
                   {"error", r.error()},
                   {"fitted_row", r.fitted_row},
                   {"hardware", r.hardware}});
  }
}

// The file, its source and what was fitted on which rows.
void print_setup_header(const studies::PublishedSetup& s, const std::vector<studies::Reproduced>& results, bool no_fit) {
  if (no_fit) {
    std::vector<std::string> profile_rows;
    for (const auto& r : results) {
      if (r.fitted_row && std::find(profile_rows.begin(), profile_rows.end(), r.row) == profile_rows.end()) profile_rows.push_back(r.row);
    }
    fmt::print("{}\n  {}\n  nothing fitted: the defaults and what the source states{}\n\n", s.path, s.source.value("title", ""),
               profile_rows.empty()
                   ? ""
                   : fmt::format(" (a framework profile's fixed cost per step was fitted on '{}')", fmt::join(profile_rows, "', '")));
  } else
    fmt::print("{}\n  {}\n  fitted on '{}': {}\n\n", s.path, s.source.value("title", ""), fmt::join(studies::fitted_rows(s), "', '"),
               s.fitted.dump());
}

// One line per figure; the fitted row's figures stay out of the tally.
ErrorTally print_figures(const std::vector<studies::Reproduced>& results) {
  std::size_t w = 4;
  for (const auto& r : results) w = std::max(w, r.row.size());
  fmt::print("  {:<{}} {:<14} {:>10} {:>10} {:>8}\n", "row", w, "metric", "published", "april", "error");
  ErrorTally t;
  for (const auto& r : results) {
    fmt::print("  {:<{}} {:<14} {:>10.2f} {:>10.2f} {:>+7.1f}%{}\n", r.row, w, r.metric, r.published, r.predicted, 100.0 * r.error(),
               r.fitted_row ? "  (fitted row)" : "");
    if (r.metric == "speedup") {
      ++t.speedups;
      if ((r.published > 1) == (r.predicted > 1)) ++t.winners_right;
      if (r.predicted < r.published) ++t.speedups_below;
    }
    if (r.fitted_row) continue;
    t.errors.push_back(std::abs(r.error()));
    if (r.metric == "step_s" || r.metric == "speedup") {
      t.goal_errors.push_back(std::abs(r.error()));
      auto& a = t.by_accelerator[r.hardware];
      a.goal_errors.push_back(std::abs(r.error()));
      if (r.metric == "step_s") {
        ++a.steps;
        if (r.predicted < r.published) ++a.steps_short;
      }
    }
  }
  return t;
}

}  // namespace

int reproduce_command(const std::vector<std::string>& args) {
  const auto o = parse_reproduce(args);
  if (o.help) {
    fmt::print("{}", kUsage);
    return 0;
  }
  if (o.files.empty()) {
    print_error(fmt::format("april reproduce: no FILE\n{}", kUsage));
    return 2;
  }
  if (o.fit && o.no_fit) {
    print_error(fmt::format("april reproduce: --fit and --no-fit exclude each other\n{}", kUsage));
    return 2;
  }
  const auto registry = policies::builtin_policies();
  std::vector<studies::PublishedSetup> setups;
  for (const auto& f : o.files) setups.push_back(studies::read_published_setup(f, registry));  // every file checked first
  if (o.fit) {
    for (const auto& s : setups) {
      fmt::print("{}: fitted on '{}': {}\n", s.path, fmt::join(studies::fitted_rows(s), "', '"), studies::fit_unknowns(s, registry).dump());
    }
    return 0;
  }
  nlohmann::json all = nlohmann::json::array();
  ErrorTally all_files;  // for the closing summary
  for (const auto& s : setups) {
    const auto results = studies::reproduce(s, registry, o.no_fit);
    if (o.json) {
      append_json_rows(all, s, results);
      continue;
    }
    print_setup_header(s, results, o.no_fit);
    const auto tally = print_figures(results);
    fmt::print("\n");
    print_tally(tally);
    fmt::print("\n");
    all_files.add(tally);
  }
  if (!o.json && setups.size() > 1) {
    fmt::print("all {} files\n", setups.size());
    print_tally(all_files);
  }
  if (o.json) fmt::print("{}\n", all.dump(2));
  return 0;
}

}  // namespace april::cli
