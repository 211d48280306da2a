#pragma once
// Published runs as checks (docs/design.md section 7): a file holds a published
// setup in our scenario keys, its source, the inputs the source does not
// state with the one row they were fitted on, and the measured rows. Every
// row but the fitted one is a prediction; `april reproduce` prints each
// published figure beside april's and the relative error.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_file.hpp"
#include "policies/registry.hpp"

namespace april::studies {

// Figures a row may publish, per training step (mean over the measured steps):
//   step_s         wall time a step adds
//   gen_s          rollout (generation) time
//   old_logprob_s  the old-logprob forward
//   update_s       the update: forward + backward, gradient reduction, optimizer
//   train_s        old_logprob_s + update_s
//   sync_s         one weight sync (trainer to engines)
//   speedup        the step time of the row named by the row's `speedup_over`
//                  over this row's (a source's "2.35x"); needs `speedup_over`
std::vector<std::string> published_metrics();
// The metrics a fit may match: those a single row's run gives (not speedup).
std::vector<std::string> fit_metrics();

struct PublishedRow {
  std::string name;
  std::string policy;
  nlohmann::json set = nlohmann::json::object();  // scenario keys this row changes
  std::map<std::string, double> published;        // metric -> figure
  std::string speedup_over;                       // the baseline row of a published speedup
  std::string quote;                              // the row as the source prints it
  // Whose timers the row's figures are: "april" (a step is the clock time it
  // adds to the run, gen_s the rollout phase) or "verl_fully_async" (verl's
  // fully-async trainer: a step is its local steps' timers summed between
  // parameter syncs, the sync left out, and gen_s its wait for samples).
  std::string timers = "april";
};

// One unknown input and the figure of the fit row it is chosen to match, by
// bisection over [lo, hi] (the figure must grow or fall with the input).
struct FitSearch {
  std::string key, metric;
  double lo = 0, hi = 0;
  std::string row;  // the row it is fitted on; empty: the setup's fit row
};

struct PublishedSetup {
  std::string path;
  nlohmann::json source;    // citation: title, url, commit, file, lines
  nlohmann::json scenario;  // our keys
  std::int64_t steps = 10, warmup_steps = 1;
  std::string fit_row;
  std::string fit_procedure;
  nlohmann::json fitted = nlohmann::json::object();  // key -> value used for every row
  std::vector<FitSearch> search;
  std::vector<PublishedRow> rows;
};

// Reads and checks a published-run file; base::ConfigError names the file,
// line and field of anything wrong (an unknown metric, policy or key, a fit row
// that is not a row).
PublishedSetup read_published_setup(const std::string& path, const policies::PolicyRegistry& registry);
// The same from a parsed document (its path names it in errors).
PublishedSetup published_setup_from_json(const base::JsonFile& file, const policies::PolicyRegistry& registry);

struct Reproduced {
  std::string row, metric;
  double published = 0, predicted = 0;
  bool fitted_row = false;  // a row the unknown inputs were fitted on
  std::string hardware;     // the row's accelerator (its `hardware` key)
  [[nodiscard]] double error() const { return (predicted - published) / published; }
};

// The rows the unknown inputs are fitted on: the fit row, then each
// search's own row, once each, in that order.
std::vector<std::string> fitted_rows(const PublishedSetup& setup);

// Simulates every row with the fitted inputs, or with none of them (`no_fit`:
// the defaults and what the source states; then no row counts as fitted).
std::vector<Reproduced> reproduce(const PublishedSetup& setup, const policies::PolicyRegistry& registry, bool no_fit = false);
// Runs the setup's searches on its fit row, in order, each with the values
// found before it; returns key -> value (what "fitted" should then hold).
nlohmann::json fit_unknowns(const PublishedSetup& setup, const policies::PolicyRegistry& registry);

}  // namespace april::studies
