#include "scenario/memory_estimate.hpp"

#include "sim/cluster_shape.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace april::scenario {
namespace {

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace

MemoryEstimate estimate_memory(const base::Config& c, std::int64_t resident_groups, bool record_timeline) {
  // Doubles throughout: the knobs' products can exceed 2^63.
  MemoryEstimate e;
  const double samples = static_cast<double>(resident_groups) * static_cast<double>(c.get_int("n_samples_per_prompt"));
  const double steps = static_cast<double>(c.get_int("steps"));
  e.resident_samples = samples;
  e.bytes = samples * kResidentSampleBytes + steps * kStepBytes;
  e.breakdown = fmt::format("{:.0f} resident samples x {:.0f} B + {:.0f} steps x {:.0f} B", samples, kResidentSampleBytes, steps,
                            kStepBytes);
  if (c.get_string("topology.preset") != "none" && c.get_string("topology.file").empty()) {
    const double gpus = static_cast<double>(sim::cluster_shape(c).gpus);
    e.bytes += gpus * kTopologyGpuBytes;
    e.breakdown += fmt::format(" + {:.0f} topology GPUs x {:.0f} B", gpus, kTopologyGpuBytes);
  }
  if (record_timeline) {
    const double points = 2 * samples * steps;
    e.bytes += points * kTimelinePointBytes;
    e.breakdown += fmt::format(" + {:.0f} timeline points x {:.0f} B", points, kTimelinePointBytes);
  }
  return e;
}

std::uint64_t machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  std::uint64_t bytes = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
  // A container's limit (cgroup v2) is what the kernel enforces.
  std::ifstream limit("/sys/fs/cgroup/memory.max");
  std::string text;
  if (limit >> text && !text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 20) {
    const auto cg = std::stoull(text);
    if (cg > 0) bytes = bytes == 0 ? cg : std::min(bytes, static_cast<std::uint64_t>(cg));
  }
  return bytes;
}

void check_memory(const MemoryEstimate& e, std::uint64_t limit_bytes) {
  if (limit_bytes == 0 || e.bytes <= static_cast<double>(limit_bytes)) return;
  throw base::ConfigError(fmt::format(
      "this scenario needs about {} of memory ({}), more than the {} this machine has; lower rollout_batch_size, "
      "n_samples_per_prompt, the over-provisioning or steps{}",
      gib(e.bytes), e.breakdown, gib(static_cast<double>(limit_bytes)),
      e.breakdown.find("timeline") != std::string::npos ? ", or run without --out (its timeline.csv)" : ""));
}

}  // namespace april::scenario
