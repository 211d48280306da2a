// The cost of handing a run between MPI ranks (studies/run_wire.hpp): a
// default-scenario run of 3000 steps encoded by the worker and decoded by
// rank 0, next to the simulation it carries (in the same process, so the
// ratio holds on a noisy machine).
#include <benchmark/benchmark.h>

#include "policies/registry.hpp"
#include "scenario/scenario.hpp"
#include "studies/run_batch.hpp"
#include "studies/run_wire.hpp"

namespace {

struct Fixture {
  april::policies::PolicyRegistry registry = april::policies::builtin_policies();
  april::base::ConfigSchema schema = april::scenario::make_schema(registry);
  april::studies::RunSpec spec{{}, "april", april::base::Config(schema)};
  april::studies::RunContext context{&registry, std::nullopt, "", april::studies::trace_hash(std::nullopt)};
  Fixture() {
    april::scenario::apply_scenario(spec.config, "default");
    spec.config.set("steps", std::int64_t{3000}, "bench");
  }
};

void BM_SimulateRun3000Steps(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) benchmark::DoNotOptimize(april::studies::simulate_run(f.spec, f.context));
}
BENCHMARK(BM_SimulateRun3000Steps)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RunWireRoundTrip3000Steps(benchmark::State& state) {
  Fixture f;
  const auto record = april::studies::simulate_run(f.spec, f.context);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = april::studies::record_to_wire(7, record);
    bytes = text.size();
    benchmark::DoNotOptimize(april::studies::record_from_wire(text));
  }
  state.counters["wire_MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_RunWireRoundTrip3000Steps)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
