#pragma once
// Runs many simulations in worker threads and stores each one in the results
// database as it finishes (skipping runs the database already holds). Shared
// by `april sweep` and `april tune`. Runs are independent objects, so they
// are safe to run in parallel; each is deterministic for its seed.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/config.hpp"
#include "base/workload_source.hpp"
#include "policies/registry.hpp"
#include "scenario/model_version.hpp"
#include "studies/results_db.hpp"

namespace april::studies {

struct RunSpec {
  nlohmann::json params;  // the swept values, for the sweep_runs table
  std::string policy;
  base::Config config;  // fully resolved, seed included
  // For an executor that keeps runs in its own memory (ThreadExecutor):
  // `pause_as` keeps this run's simulation after its last step under that
  // name, and `resume` runs on the one kept under that name, if any, instead
  // of starting over. The result is the same either way (studies/paused_runs.hpp),
  // so other executors start every run from its first step.
  std::string pause_as{};  // (initialised here: the brace-built specs name three fields)
  std::string resume{};
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
  double store_s = 0;  // time spent writing runs to the database (the ceiling on a store-bound sweep's rate)
  std::string last;    // what just finished
};

// What every run of a batch is simulated with besides its spec.
struct RunContext {
  const policies::PolicyRegistry* registry = nullptr;
  std::optional<std::vector<base::GroupSpec>> trace;
  std::string trace_name;
  std::string trace_hash;  // trace_hash(trace)
};

class PausedRuns;

// Simulates one run into the record the database stores. A run that throws
// is a record with status "failed" and the error; nothing escapes. With
// `paused`, the spec's pause_as and resume are honoured there.
RunRecord simulate_run(const RunSpec& spec, const RunContext& context, PausedRuns* paused = nullptr);

// Where a batch's runs are simulated: worker threads here, or other processes
// (studies/mpi_runs.hpp). `done` is called once per run with its position in
// `todo`, never concurrently, and must not throw.
class RunExecutor {
 public:
  virtual ~RunExecutor() = default;
  using Done = std::function<void(std::size_t k, RunRecord&& record)>;
  virtual void execute(const std::vector<const RunSpec*>& todo, const RunContext& context, const Done& done) = 0;
  // Drops the runs kept to go on from (RunSpec::pause_as), if any.
  virtual void drop_paused() {}
};

// Worker threads in this process, each taking the next run when it is free
// (runs differ a lot in cost). Runs paused by one call are kept for later
// ones, up to a quarter of this machine's memory, until drop_paused().
class ThreadExecutor final : public RunExecutor {
 public:
  explicit ThreadExecutor(std::int64_t jobs);
  ~ThreadExecutor() override;
  ThreadExecutor(const ThreadExecutor&) = delete;
  ThreadExecutor& operator=(const ThreadExecutor&) = delete;
  void execute(const std::vector<const RunSpec*>& todo, const RunContext& context, const Done& done) override;
  void drop_paused() override;

 private:
  std::int64_t jobs_;
  std::unique_ptr<PausedRuns> paused_;
};

struct BatchOptions {
  std::int64_t jobs = 1;
  std::optional<std::vector<base::GroupSpec>> trace;
  std::string trace_name;
  std::function<void(const BatchProgress&)> on_progress;  // called under a lock, in the finishing thread
  RunExecutor* executor = nullptr;                        // null: a ThreadExecutor with `jobs` threads
};

// Identity of a run: the model version, resolved scenario, policy and trace
// contents. A run stored by another model version has another key, so it is
// re-run rather than reused.
std::string run_key(const base::Config& config, const std::string& policy, const std::string& trace_hash,
                    std::int64_t model_version = scenario::kModelVersion);
std::string trace_hash(const std::optional<std::vector<base::GroupSpec>>& trace);

// Runs every spec the database does not hold yet (through options.executor)
// and stores each as it finishes, in the calling process: one writer.
std::vector<RunOutcome> run_batch(ResultsDb& db, std::int64_t sweep, const policies::PolicyRegistry& registry,
                                  const std::vector<RunSpec>& specs, const BatchOptions& options);

}  // namespace april::studies
