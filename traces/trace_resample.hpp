#pragma once
// Trace-driven workload for runs longer than the trace: whole groups drawn
// uniformly at random, with replacement, from the trace's own RNG stream.
#include <string>
#include <vector>

#include "base/rng.hpp"
#include "base/workload_source.hpp"

namespace april::traces {

class TraceResample final : public base::WorkloadSource {
 public:
  TraceResample(std::vector<base::GroupSpec> groups, std::string name, std::uint64_t seed);
  base::GroupSpec next_group(std::int64_t step) override;
  [[nodiscard]] std::string describe() const override;

 private:
  std::vector<base::GroupSpec> groups_;
  std::string name_;
  base::Rng rng_;
  std::int64_t drawn_ = 0;
};

}  // namespace april::traces
