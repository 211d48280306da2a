#pragma once
// Where prompt groups come from, as the RL loop sees it: one group at a time,
// in dataset order. Implemented by the simulator's long-tail generator
// (sim/workload.hpp) and by trace replay (traces/).
#include <cstdint>
#include <string>
#include <vector>

namespace april::base {

struct GroupSpec {
  std::string prompt_id;
  std::int32_t prompt_tok = 0;
  std::vector<std::int32_t> response_tok;  // target length of each sample, before the length cap
  std::vector<std::uint8_t> correct;       // per sample, when known (drives the dynamic-sampling filter)
};

class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;
  // The next group in dataset order; `step` is the step that first takes it.
  virtual GroupSpec next_group(std::int64_t step) = 0;
  [[nodiscard]] virtual std::string describe() const = 0;
};

}  // namespace april::base
