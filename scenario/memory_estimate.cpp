#include "scenario/memory_estimate.hpp"

#include "base/run_keys.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/train_sync_knobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace april::scenario {
namespace {

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace

MemoryEstimate estimate_memory(const base::Config& c, std::int64_t resident_groups, bool record_timeline, bool record_windows) {
  return estimate_memory(c, sim::ScenarioInputs(c), resident_groups, record_timeline, record_windows);
}

MemoryEstimate estimate_memory(const base::Config& c, const sim::ScenarioInputs& inputs, std::int64_t resident_groups, bool record_timeline,
                               bool record_windows) {
  // Doubles throughout: the knobs' products can exceed 2^63.
  MemoryEstimate e;
  const double samples = static_cast<double>(resident_groups) * static_cast<double>(c.get(base::keys::kSamplesPerPrompt));
  const double steps = static_cast<double>(c.get(base::keys::kSteps));
  e.resident_samples = samples;
  e.bytes = samples * kResidentSampleBytes + steps * kStepBytes;
  e.breakdown =
      fmt::format("{:.0f} resident samples x {:.0f} B + {:.0f} steps x {:.0f} B", samples, kResidentSampleBytes, steps, kStepBytes);
  if (c.get(sim::keys::kTopologyPreset) != "none" && c.get(sim::keys::kTopologyFile).empty()) {
    const double gpus = static_cast<double>(sim::cluster_shape(c, inputs).gpus);
    e.bytes += gpus * kTopologyGpuBytes;
    e.breakdown += fmt::format(" + {:.0f} topology GPUs x {:.0f} B", gpus, kTopologyGpuBytes);
  }
  if (record_timeline) {
    const double points = 2 * samples * steps;
    e.bytes += points * kTimelinePointBytes;
    e.breakdown += fmt::format(" + {:.0f} timeline points x {:.0f} B", points, kTimelinePointBytes);
  }
  if (record_windows) {
    const double windows = 2 * samples * steps;
    e.bytes += windows * kTimelineWindowBytes;
    e.breakdown += fmt::format(" + {:.0f} timeline windows x {:.0f} B", windows, kTimelineWindowBytes);
  }
  return e;
}

void check_memory(const MemoryEstimate& e, std::uint64_t limit_bytes) {
  if (limit_bytes == 0 || e.bytes <= static_cast<double>(limit_bytes)) return;
  throw base::ConfigError(
      fmt::format("this scenario needs about {} of memory ({}), more than the {} this machine has; lower rollout_batch_size, "
                  "n_samples_per_prompt, the over-provisioning or steps{}",
                  gib(e.bytes), e.breakdown, gib(static_cast<double>(limit_bytes)),
                  e.breakdown.find("timeline") != std::string::npos ? ", or run without --out (its timeline.csv)" : ""));
}

}  // namespace april::scenario
