#pragma once
// Trace-driven workload for runs longer than the trace: whole groups drawn
// uniformly at random, with replacement, from the trace's own RNG stream.
#include <string>
#include <vector>

#include "sim/rng.hpp"
#include "sim/workload.hpp"

namespace april::traces {

class TraceResample final : public sim::WorkloadSource {
 public:
  TraceResample(std::vector<sim::GroupSpec> groups, std::string name, std::uint64_t seed);
  sim::GroupSpec next_group(std::int64_t step) override;
  [[nodiscard]] std::string describe() const override;

 private:
  std::vector<sim::GroupSpec> groups_;
  std::string name_;
  sim::Rng rng_;
  std::int64_t drawn_ = 0;
};

}  // namespace april::traces
