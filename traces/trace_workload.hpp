#pragma once
// Replays a trace's groups in file order, wrapping at the end (one epoch per pass).
#include <string>
#include <vector>

#include "sim/workload.hpp"

namespace april::traces {

class TraceReplay final : public sim::WorkloadSource {
 public:
  TraceReplay(std::vector<sim::GroupSpec> groups, std::string name);
  sim::GroupSpec next_group(std::int64_t step) override;
  [[nodiscard]] std::string describe() const override;

 private:
  std::vector<sim::GroupSpec> groups_;
  std::string name_;
  std::size_t next_ = 0;
};

}  // namespace april::traces
