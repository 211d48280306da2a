#pragma once
// Runs many simulations in worker threads and stores each one in the results
// database as it finishes (skipping runs the database already holds). Shared
// by `april sweep` and `april tune`. Runs are independent objects, so they
// are safe to run in parallel; each is deterministic for its seed.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/model_version.hpp"
#include "studies/results_db.hpp"
#include "policies/registry.hpp"
#include "base/config.hpp"
#include "base/workload_source.hpp"

namespace april::studies {

struct RunSpec {
  nlohmann::json params;  // the swept values, for the sweep_runs table
  std::string policy;
  base::Config config;     // fully resolved, seed included
};

struct RunOutcome {
  std::int64_t run_id = 0;
  bool skipped = false;  // already in the database
  bool failed = false;
  std::string error;
  std::map<std::string, double> metrics;  // summary metrics
};

struct BatchProgress {
  std::int64_t finished = 0, total = 0, skipped = 0, failed = 0;
  double elapsed_s = 0;
  std::string last;  // what just finished
};

struct BatchOptions {
  std::int64_t jobs = 1;
  std::optional<std::vector<base::GroupSpec>> trace;
  std::string trace_name;
  std::function<void(const BatchProgress&)> on_progress;  // called under a lock, in the finishing thread
};

// Identity of a run: the model version, resolved scenario, policy and trace
// contents. A run stored by another model version has another key, so it is
// re-run rather than reused.
std::string run_key(const base::Config& config, const std::string& policy, const std::string& trace_hash,
                    std::int64_t model_version = scenario::kModelVersion);
std::string trace_hash(const std::optional<std::vector<base::GroupSpec>>& trace);

std::vector<RunOutcome> run_batch(ResultsDb& db, std::int64_t sweep, const policies::PolicyRegistry& registry,
                                  const std::vector<RunSpec>& specs, const BatchOptions& options);

}  // namespace april::studies
