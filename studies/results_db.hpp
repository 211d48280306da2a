#pragma once
// The SQLite results store. Every run is written in one transaction (all its
// metrics and steps, or nothing), in WAL mode with a busy timeout, so a killed
// sweep loses no finished run and leaves no half-written one, and several
// processes can write one database at once.
//
// Schema (version kSchemaVersion; tests/studies/results_db_test.cpp pins it):
//   meta(key, value)                      schema_version lives here
//   sweeps(id, spec_hash, kind, scenario, spec, program_version, created_at)
//   runs(id, run_key UNIQUE, scenario_hash, scenario_json, policy, seed, program_version,
//        started_at, finished_at, wall_time_s, status, error, model_version)
//   sweep_runs(sweep_id, run_id, params)  params: JSON of the swept values
//   metrics(run_id, name, value)          summary metrics (summary.json names)
//   steps(run_id, step, <steps.csv columns>)
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rl/step_metrics.hpp"

struct sqlite3;

namespace april::studies {

// 2: runs.model_version (schema 1 databases are migrated in place on open;
//    their runs count as model version 0 and are re-run, not reused).
// 3: steps gains batch_ready_s, train_start_s, train_end_s and sync_end_s
//    (docs/design.md 3b); older rows keep NULL there.
// 4: steps gains tokens_carried and april_offpolicy_ratio (docs/design.md 3).
// 5: steps gains abort_time_s.
// 6: steps gains tokens_masked (masked batch tokens, no longer in tokens_wasted).
// 7: steps gains the train step's modelled phases (train_old_logprob_s ...
//    train_other_s); NULL for live runs and older rows.
// 8: steps gains trainer_lent_s and trainer_lent_fraction (elastic splits).
inline constexpr int kSchemaVersion = 8;

class DbError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunRecord {
  std::string run_key;
  std::string scenario_hash;
  nlohmann::json scenario;  // resolved keys
  std::string policy;
  std::int64_t seed = 0;
  std::string started_at, finished_at;  // ISO 8601, UTC
  double wall_time_s = 0;
  std::int64_t model_version = 0;  // scenario::kModelVersion of the code that ran it
  std::string status = "done";     // done | failed
  std::string error;
  nlohmann::json summary;  // summary_json(): numbers become metrics rows
  std::vector<rl::StepMetrics> steps;
  // Not stored: of `steps`, those a kept simulation had run before this
  // run went on from them (studies/paused_runs.hpp).
  std::int64_t steps_before = 0;
};

struct SweepInfo {
  std::int64_t id = 0;
  std::string kind, scenario, spec, created_at;
  std::int64_t runs = 0, done = 0;
};

enum class DbAccess { ReadWrite, ReadOnly };

class ResultsDb {
 public:
  // ReadWrite creates the file and schema if needed (migrating an older
  // schema); ReadOnly changes nothing and works where the user may only read
  // (`april db`). Both refuse a database written by a newer schema version, or
  // a file that is not an april database.
  explicit ResultsDb(const std::string& path, DbAccess access = DbAccess::ReadWrite);
  ~ResultsDb();
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  // The sweep with this spec (created on first use): re-running a sweep finds it again.
  std::int64_t sweep_id(const std::string& kind, const std::string& scenario, const std::string& spec);
  // Id of a finished run with this key, if any.
  std::optional<std::int64_t> finished_run(const std::string& run_key);
  // Links a run to a sweep, dropping the sweep's stale link to the same run
  // (params, policy, seed) from another model version.
  void link(std::int64_t sweep, std::int64_t run, const nlohmann::json& params);
  // Stores a run and links it to the sweep, in one transaction. If another
  // process stored the same run first, that one is kept and linked. A failed
  // run with the same key is replaced in place (its id, and so every sweep's
  // link to it, is kept). In this sweep, links with the same params, policy
  // and seed to a run of another model version are dropped: the new run
  // replaces the stale one in the sweep's results.
  std::int64_t store_run(std::int64_t sweep, const RunRecord& run, const nlohmann::json& params);

  // Summary metrics of a run, by name.
  std::map<std::string, double> run_metrics(std::int64_t run);
  std::vector<SweepInfo> sweeps();
  // Rows of one sweep: params, run columns and every metric, for export.
  std::string export_sweep_csv(std::int64_t sweep);
  nlohmann::json run_json(std::int64_t run);
  // A metric of each done run of a sweep: (params, seed, value).
  struct MetricRow {
    nlohmann::json params;
    std::int64_t seed;
    std::map<std::string, double> metrics;
  };
  std::vector<MetricRow> sweep_metrics(std::int64_t sweep);

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::int64_t sweep_id_once(const std::string& kind, const std::string& scenario, const std::string& spec);
  std::int64_t store_run_once(std::int64_t sweep, const RunRecord& run, const nlohmann::json& params);
  void exec(const std::string& sql);
  void init_schema();
  void migrate(int from_version);
  void open_read_only();
  void check_schema_read_only();
  // schema_version's text as a number this april can read; throws otherwise.
  [[nodiscard]] int schema_version_of(const std::string& text) const;
  void link_in_transaction(std::int64_t sweep, std::int64_t run, const nlohmann::json& params);
  std::string path_;
  sqlite3* db_ = nullptr;
};

std::string utc_now_iso8601();

}  // namespace april::studies
