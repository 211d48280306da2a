#include "studies/run_batch.hpp"
#include "rl/metric_columns.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <thread>

#include "base/hash.hpp"
#include "base/out_of_memory.hpp"
#include "base/run_keys.hpp"
#include "scenario/memory_estimate.hpp"
#include "scenario/model_version.hpp"
#include "scenario/simulation.hpp"
#include "studies/paused_runs.hpp"

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

RunRecord simulate_run(const RunSpec& spec, const RunContext& context, PausedRuns* paused) {
  RunRecord rec;
  rec.run_key = run_key(spec.config, spec.policy, context.trace_hash);
  rec.model_version = scenario::kModelVersion;
  rec.scenario = spec.config.resolved();
  rec.scenario_hash = base::hash_hex(rec.scenario.dump());
  rec.policy = spec.policy;
  rec.seed = spec.config.get(base::keys::kSeed);
  rec.started_at = utc_now_iso8601();
  const auto w0 = std::chrono::steady_clock::now();
  try {
    std::unique_ptr<scenario::Simulation> sim;
    if (paused != nullptr && !spec.resume.empty()) sim = paused->take(spec.resume, spec.config);
    if (sim) {
      // The run grows to the spec's steps: the memory check a new run makes.
      scenario::check_memory(scenario::estimate_memory(
                                 spec.config, sim->policy().resident_groups_bound(spec.config.get(base::keys::kRolloutBatchSize)), false),
                             base::machine_memory_bytes());
    } else {
      scenario::RunOptions ro;
      ro.trace = context.trace;
      ro.trace_name = context.trace_name;
      sim = std::make_unique<scenario::Simulation>(spec.config, *context.registry, spec.policy, ro);
    }
    rec.steps_before = static_cast<std::int64_t>(sim->recorded_steps());
    const scenario::RunResult r = sim->run_to(spec.config.get(base::keys::kSteps));
    rec.summary = rl::summary_json(r.summary);
    rec.steps = r.steps;
    if (paused != nullptr && !spec.pause_as.empty()) paused->keep(spec.pause_as, spec.config, std::move(sim));
  } catch (const std::bad_alloc&) {
    rec.status = "failed";
    rec.error = base::kOutOfMemory;
  } catch (const std::exception& e) {
    rec.status = "failed";
    rec.error = e.what();
  }
  rec.finished_at = utc_now_iso8601();
  rec.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  return rec;
}

ThreadExecutor::ThreadExecutor(std::int64_t jobs)
    : jobs_(jobs), paused_(std::make_unique<PausedRuns>(0.25 * static_cast<double>(base::machine_memory_bytes()))) {}

ThreadExecutor::~ThreadExecutor() = default;

void ThreadExecutor::drop_paused() { paused_->clear(); }

void ThreadExecutor::execute(const std::vector<const RunSpec*>& todo, const RunContext& context, const Done& done) {
  std::mutex done_mutex;  // `done` is never called concurrently
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= todo.size()) return;
      RunRecord rec = simulate_run(*todo[k], context, paused_.get());
      std::lock_guard<std::mutex> lock(done_mutex);
      done(k, std::move(rec));
    }
  };
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(1, std::min<std::int64_t>(jobs_, static_cast<std::int64_t>(todo.size()))));
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

std::vector<RunOutcome> run_batch(ResultsDb& db, std::int64_t sweep, const policies::PolicyRegistry& registry,
                                  const std::vector<RunSpec>& specs, const BatchOptions& options) {
  std::vector<RunOutcome> out(specs.size());
  RunContext context{&registry, options.trace, options.trace_name, trace_hash(options.trace)};
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
  std::vector<const RunSpec*> todo_specs;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto key = run_key(specs[i].config, specs[i].policy, context.trace_hash);
    if (auto id = db.finished_run(key)) {
      db.link(sweep, *id, specs[i].params);
      out[i].run_id = *id;
      out[i].skipped = true;
      out[i].metrics = db.run_metrics(*id);
      ++progress.skipped;
      ++progress.finished;
    } else {
      todo.push_back(i);
      todo_specs.push_back(&specs[i]);
    }
  }
  if (progress.skipped > 0) report(fmt::format("{} runs already in the database", progress.skipped));

  // One finished run: store it. A store that throws is recorded as failed too
  // where the database still takes a row, and in the outcome either way.
  // Nothing here may escape (it runs in a worker thread or a message loop).
  auto store = [&](std::size_t k, RunRecord&& rec) {
    const std::size_t i = todo[k];
    const RunSpec& spec = specs[i];
    RunOutcome& o = out[i];
    const auto s0 = std::chrono::steady_clock::now();
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
    progress.store_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    ++progress.finished;
    if (o.failed) ++progress.failed;
    try {
      report(fmt::format("{} {} seed {}{}", spec.policy, spec.params.dump(), rec.seed, o.failed ? " FAILED: " + o.error : ""));
    } catch (const std::exception& e) {
      // Only a progress callback can get here; the run itself is recorded.
      o.failed = true;
      if (o.error.empty()) o.error = e.what();
    }
  };
  if (todo.empty()) return out;
  ThreadExecutor local(options.jobs);
  RunExecutor& executor = options.executor != nullptr ? *options.executor : local;
  executor.execute(todo_specs, context, store);
  return out;
}

}  // namespace april::studies
