#include "traces/trace_workload.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace april::traces {

TraceReplay::TraceReplay(std::vector<base::GroupSpec> groups, std::string name) : groups_(std::move(groups)), name_(std::move(name)) {
  if (groups_.empty()) throw std::invalid_argument("a trace replay needs at least one group");
}

base::GroupSpec TraceReplay::next_group(std::int64_t /*step*/) {
  base::GroupSpec g = groups_[next_];
  next_ = (next_ + 1) % groups_.size();
  return g;
}

std::string TraceReplay::describe() const { return fmt::format("trace {} ({} groups, replayed in order)", name_, groups_.size()); }

}  // namespace april::traces
