#include "studies/run_batch.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "base/hash.hpp"
#include "scenario/model_version.hpp"
#include "scenario/simulation.hpp"

namespace april::studies {

std::string trace_hash(const std::optional<std::vector<base::GroupSpec>>& trace) {
  if (!trace) return "generator";
  std::string text;
  for (const auto& g : *trace) {
    text += g.prompt_id + ':' + std::to_string(g.prompt_tok);
    for (auto t : g.response_tok) text += ',' + std::to_string(t);
    for (auto c : g.correct) text += c ? 'y' : 'n';
    text += '\n';
  }
  return base::hash_hex(text);
}

std::string run_key(const base::Config& config, const std::string& policy, const std::string& trace, std::int64_t model_version) {
  return base::hash_hex(fmt::format("model {}\n", model_version) + config.resolved().dump() + "\n" + policy + "\n" + trace);
}

std::vector<RunOutcome> run_batch(ResultsDb& db, std::int64_t sweep, const policies::PolicyRegistry& registry,
                                  const std::vector<RunSpec>& specs, const BatchOptions& options) {
  std::vector<RunOutcome> out(specs.size());
  const std::string th = trace_hash(options.trace);
  std::mutex db_mutex;  // one writer at a time on this connection
  BatchProgress progress;
  progress.total = static_cast<std::int64_t>(specs.size());
  const auto t0 = std::chrono::steady_clock::now();
  auto report = [&](const std::string& what) {
    progress.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress.last = what;
    if (options.on_progress) options.on_progress(progress);
  };

  // Runs the database already holds are linked, not run again.
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto key = run_key(specs[i].config, specs[i].policy, th);
    if (auto id = db.finished_run(key)) {
      db.link(sweep, *id, specs[i].params);
      out[i].run_id = *id;
      out[i].skipped = true;
      out[i].metrics = db.run_metrics(*id);
      ++progress.skipped;
      ++progress.finished;
    } else {
      todo.push_back(i);
    }
  }
  if (progress.skipped > 0) report(fmt::format("{} runs already in the database", progress.skipped));

  std::atomic<std::size_t> next{0};
  // One run: simulate, then store. A run that throws is recorded as failed;
  // a store that throws is recorded as failed too where the database still
  // takes a row, and in the outcome either way. Nothing here may escape a
  // worker thread (that would end the process).
  auto run_one = [&](std::size_t i) {
    const RunSpec& spec = specs[i];
    RunRecord rec;
    rec.run_key = run_key(spec.config, spec.policy, th);
    rec.model_version = scenario::kModelVersion;
    rec.scenario = spec.config.resolved();
    rec.scenario_hash = base::hash_hex(rec.scenario.dump());
    rec.policy = spec.policy;
    rec.seed = spec.config.get_int("seed");
    rec.started_at = utc_now_iso8601();
    const auto w0 = std::chrono::steady_clock::now();
    try {
      scenario::RunOptions ro;
      ro.trace = options.trace;
      ro.trace_name = options.trace_name;
      const scenario::RunResult r = scenario::simulate(spec.config, registry, spec.policy, ro);
      rec.summary = rl::summary_json(r.summary);
      rec.steps = r.steps;
    } catch (const std::exception& e) {
      rec.status = "failed";
      rec.error = e.what();
    }
    rec.finished_at = utc_now_iso8601();
    rec.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    std::lock_guard<std::mutex> lock(db_mutex);
    RunOutcome& o = out[i];
    try {
      o.run_id = db.store_run(sweep, rec, spec.params);
      o.metrics = db.run_metrics(o.run_id);
      o.failed = rec.status != "done";
      o.error = rec.error;
    } catch (const std::exception& e) {
      o.failed = true;
      o.error = fmt::format("storing the results failed: {}", e.what());
      o.metrics.clear();
      RunRecord failed = rec;
      failed.status = "failed";
      failed.error = o.error;
      failed.summary = nlohmann::json::object();
      failed.steps.clear();
      try {
        o.run_id = db.store_run(sweep, failed, spec.params);
      } catch (const std::exception&) {
        o.run_id = 0;  // the database takes nothing now; the outcome says why
      }
    }
    ++progress.finished;
    if (o.failed) ++progress.failed;
    report(fmt::format("{} {} seed {}{}", spec.policy, spec.params.dump(), rec.seed, o.failed ? " FAILED: " + o.error : ""));
  };
  auto worker = [&] {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= todo.size()) return;
      try {
        run_one(todo[k]);
      } catch (const std::exception& e) {
        // Only a progress callback can get here; the run itself is recorded.
        std::lock_guard<std::mutex> lock(db_mutex);
        out[todo[k]].failed = true;
        if (out[todo[k]].error.empty()) out[todo[k]].error = e.what();
      }
    }
  };
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(1, std::min<std::int64_t>(options.jobs, static_cast<std::int64_t>(todo.size()))));
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace april::studies
