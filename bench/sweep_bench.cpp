// Sweep throughput: 16 default-scenario runs of 100 steps, stored in a fresh
// SQLite database, with 1 and 2 worker threads.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <filesystem>

#include "policies/registry.hpp"
#include "scenario/scenario.hpp"
#include "studies/results_db.hpp"
#include "studies/run_batch.hpp"

namespace {

void BM_SweepJobs(benchmark::State& state) {
  const auto jobs = state.range(0);
  const auto registry = april::policies::builtin_policies();
  const auto schema = april::scenario::make_schema(registry);
  std::vector<april::studies::RunSpec> specs;
  for (int i = 0; i < 16; ++i) {
    april::base::Config c(schema);
    april::scenario::apply_scenario(c, "default");
    c.set("steps", std::int64_t{100}, "bench");
    c.set("seed", std::int64_t{i + 1}, "bench");
    specs.push_back({{{"seed", i + 1}}, i % 2 ? "april" : "sync", c});
  }
  const auto path = (std::filesystem::temp_directory_path() / fmt::format("april_bench_sweep_{}.db", jobs)).string();
  std::int64_t runs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    state.ResumeTiming();
    april::studies::ResultsDb db(path);
    const auto out = april::studies::run_batch(db, db.sweep_id("sweep", "default", "bench"), registry, specs, {jobs, std::nullopt, "", {}});
    runs += static_cast<std::int64_t>(out.size());
  }
  state.SetLabel(fmt::format("sweep {} jobs", jobs));
  state.counters["runs_per_s"] = benchmark::Counter(static_cast<double>(runs), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SweepJobs)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
