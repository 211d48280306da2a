#pragma once
// What a simulation run will hold in memory, estimated from the scenario
// before anything is built, so that a scenario larger than the machine is
// refused up front with the estimate rather than growing until the kernel
// kills it. The per-item costs were measured (peak RSS against the item
// count, 2026-11, g++ 12, x86-64) and rounded up:
//   resident sample (request, progress, loop bookkeeping)  ~250-290 B -> 320 B
//   recorded step (metrics row and its vectors)            ~216 B     -> 256 B
//   topology-preset GPU (graph node, links, names)         ~800 B     -> 1 KiB
//   timeline point (--out, --timeline): 40 B, about two per sample and step.
//   engine window (--timeline-detail windows): 64 B, about two per sample and step.
#include <cstdint>
#include <string>

#include "base/config.hpp"
#include "base/machine_memory.hpp"
#include "rl/run_timeline.hpp"
#include "sim/scenario_inputs.hpp"

namespace april::scenario {

inline constexpr double kResidentSampleBytes = 320;
inline constexpr double kStepBytes = 256;
inline constexpr double kTopologyGpuBytes = 1024;
inline constexpr double kTimelinePointBytes = sizeof(rl::EngineRunningChange);  // five 64-bit integers: 40 B
inline constexpr double kTimelineWindowBytes = sizeof(rl::EngineWindowSpan);    // seven 64-bit integers and a flag: 64 B

struct MemoryEstimate {
  double resident_samples = 0;  // the policy's resident groups x n_samples_per_prompt
  double bytes = 0;
  std::string breakdown;  // "… samples x 320 B + … steps x 256 B + …"
};

// `resident_groups`: the policy's bound (Policy::resident_groups_bound).
// `inputs`: the scenario's model and accelerators; without them, its own are resolved.
MemoryEstimate estimate_memory(const base::Config& config, const sim::ScenarioInputs& inputs, std::int64_t resident_groups,
                               bool record_timeline, bool record_windows = false);
MemoryEstimate estimate_memory(const base::Config& config, std::int64_t resident_groups, bool record_timeline, bool record_windows = false);

// Throws base::ConfigError with the estimate when it exceeds `limit_bytes`.
void check_memory(const MemoryEstimate& estimate, std::uint64_t limit_bytes);

}  // namespace april::scenario
