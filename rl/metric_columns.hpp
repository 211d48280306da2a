#pragma once
// Every metric a run reports, listed once: its name, whether it is an
// integer, where it appears (a column of steps.csv and of the results
// database's steps table, a key of summary.json and of the database's
// metrics table, or both) and how it is read from a step, its derived values
// and, for the summary, the whole run. Adding a metric is one line here.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "rl/step_metrics.hpp"

namespace april::rl {

enum MetricWhere : unsigned { kPerStep = 1U, kInSummary = 2U, kBoth = 3U };

struct MetricColumn {
  const char* name;
  bool integer;
  unsigned where;  // MetricWhere bits
  // nullopt: no value (an empty CSV cell, SQL NULL; in the summary, the key
  // is left out, or written as null where null_in_summary).
  std::function<std::optional<double>(const StepMetrics&, const DerivedMetrics&, const RunSummary* run)> value;
  bool null_in_summary = false;
};

// The whole table, in steps.csv's column order (columns are appended only,
// so that older databases gain new ones by ALTER TABLE).
const std::vector<MetricColumn>& metric_columns();
// Its per-step part: steps.csv and the database's steps table.
const std::vector<MetricColumn>& step_columns();

// summary.json's object for one run: the summary part of the table, taken on
// the run's totals, plus the run's event fingerprint.
nlohmann::json summary_json(const RunSummary& s);
std::string steps_csv(const std::vector<StepMetrics>& steps);

}  // namespace april::rl
