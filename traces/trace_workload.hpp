#pragma once
// Replays a trace's groups in file order, wrapping at the end (one epoch per pass).
#include <string>
#include <vector>

#include "base/workload_source.hpp"

namespace april::traces {

class TraceReplay final : public base::WorkloadSource {
 public:
  TraceReplay(std::vector<base::GroupSpec> groups, std::string name);
  base::GroupSpec next_group(std::int64_t step) override;
  [[nodiscard]] std::string describe() const override;

 private:
  std::vector<base::GroupSpec> groups_;
  std::string name_;
  std::size_t next_ = 0;
};

}  // namespace april::traces
