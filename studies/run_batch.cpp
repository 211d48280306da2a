#include "studies/run_batch.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "base/hash.hpp"
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

std::string run_key(const base::Config& config, const std::string& policy, const std::string& trace) {
  return base::hash_hex(config.resolved().dump() + "\n" + policy + "\n" + trace);
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
  auto worker = [&] {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= todo.size()) return;
      const auto i = todo[k];
      const RunSpec& spec = specs[i];
      RunRecord rec;
      rec.run_key = run_key(spec.config, spec.policy, th);
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
      out[i].run_id = db.store_run(sweep, rec, spec.params);
      out[i].failed = rec.status != "done";
      out[i].error = rec.error;
      out[i].metrics = db.run_metrics(out[i].run_id);
      ++progress.finished;
      if (out[i].failed) ++progress.failed;
      report(fmt::format("{} {} seed {}{}", spec.policy, spec.params.dump(), rec.seed, out[i].failed ? " FAILED: " + rec.error : ""));
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
