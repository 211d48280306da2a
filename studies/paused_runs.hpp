#pragma once
// Simulations kept in memory after their last step, to run on later: a
// race's one-seed screening runs, which the plans that pass the screening
// continue instead of starting over. A run's first steps do not depend on
// how many follow, so a continued run is the longer run, step for step.
// Kept runs are bounded by their memory estimates; past the budget a run is
// not kept, and the longer run starts over (the same result, more time).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/config.hpp"
#include "scenario/simulation.hpp"

namespace april::studies {

class PausedRuns {
 public:
  explicit PausedRuns(double budget_bytes) : budget_bytes_(budget_bytes) {}

  // Keeps `sim`, built from `config`, under `name` if the budget allows.
  void keep(const std::string& name, const base::Config& config, std::unique_ptr<scenario::Simulation> sim);
  // The run kept under `name`, taken out, or null when none is. A run built
  // from another scenario than `config` (its steps aside) is a logic_error:
  // continuing it would not be the run asked for.
  std::unique_ptr<scenario::Simulation> take(const std::string& name, const base::Config& config);
  void clear();
  [[nodiscard]] std::size_t size() const;

 private:
  struct Kept {
    std::string scenario;  // the resolved keys but `steps`
    std::unique_ptr<scenario::Simulation> sim;
  };
  double budget_bytes_;
  double held_bytes_ = 0;
  mutable std::mutex mutex_;
  std::map<std::string, Kept> kept_;
};

}  // namespace april::studies
