// Simulator speed: 1000 steps of the default scenario per policy, and the
// ratio of fast-forward to per-iteration stepping, measured in one run.
// Run: build/bench/april_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <map>
#include <string>

#include "policies/registry.hpp"
#include "scenario/design_space.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation.hpp"
#include "sim/simulator.hpp"

namespace {

// The overlapping ones run on the split `april simulate` picks for them on the
// default scenario: 6 rollout + 2 train GPUs.
const char* const kPolicies[] = {"sync", "april", "sorted", "one_step_off", "async"};

// args: policy index, fast_forward (1/0), steps
void BM_SimulateDefault(benchmark::State& state) {
  const std::string policy = kPolicies[state.range(0)];
  const bool ff = state.range(1) != 0;
  const auto steps = state.range(2);
  const auto registry = april::policies::builtin_policies();
  const auto schema = april::scenario::make_schema(registry);
  april::base::Config config(schema);
  april::scenario::apply_scenario(config, "default");
  if (april::scenario::policy_overlaps(config, registry, policy)) config = april::scenario::on_split(config, 6);
  config.set("steps", std::int64_t{steps}, "bench");
  config.set("engine.fast_forward", ff, "bench");
  std::int64_t tokens = 0, events = 0;
  for (auto _ : state) {
    const auto r = april::scenario::simulate(config, registry, policy);
    tokens += r.summary.totals.tokens_generated;
    events += r.events;
    benchmark::DoNotOptimize(r.summary.fingerprint);
  }
  state.SetLabel(fmt::format("{} {} {} steps", policy, ff ? "fast-forward" : "per-iteration", steps));
  state.counters["sim_tok_per_wall_s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["steps_per_wall_s"] =
      benchmark::Counter(static_cast<double>(steps) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["events_per_step"] = static_cast<double>(events) / static_cast<double>(state.iterations() * steps);
}

void PolicyArgs(benchmark::internal::Benchmark* b) {
  for (int p = 0; p < 5; ++p) {
    b->Args({p, 1, 1000});  // the goal: 1000 steps in under 1 s on one core
    b->Args({p, 1, 20});    // same steps in both modes for the ratio
    b->Args({p, 0, 20});
  }
}
BENCHMARK(BM_SimulateDefault)->Apply(PolicyArgs)->Unit(benchmark::kMillisecond)->MinTime(0.5);

void BM_EventQueuePushPop(benchmark::State& state) {
  const auto n = state.range(0);
  for (auto _ : state) {
    april::sim::Simulator sim;
    std::uint64_t x = 88172645463325252ULL;
    for (std::int64_t i = 0; i < n; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      sim.schedule_at(april::sim::TimeNs(static_cast<std::int64_t>(x % 1000000)), 0, [] {});
    }
    while (sim.step()) {
    }
    benchmark::DoNotOptimize(sim.fingerprint());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_EventQueuePushPop)->Arg(1 << 10)->Arg(1 << 16);

}  // namespace
