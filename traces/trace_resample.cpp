#include "traces/trace_resample.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace april::traces {

TraceResample::TraceResample(std::vector<base::GroupSpec> groups, std::string name, std::uint64_t seed)
    : groups_(std::move(groups)), name_(std::move(name)), rng_(seed, "trace-resample") {
  if (groups_.empty()) throw std::invalid_argument("resampling needs at least one group");
}

base::GroupSpec TraceResample::next_group(std::int64_t /*step*/) {
  const auto i = static_cast<std::size_t>(rng_.next_u64() % groups_.size());
  base::GroupSpec g = groups_[i];
  g.prompt_id = fmt::format("{}#{}", g.prompt_id, drawn_++);  // a draw, not the original
  return g;
}

std::string TraceResample::describe() const { return fmt::format("trace {} ({} groups, resampled)", name_, groups_.size()); }

}  // namespace april::traces
