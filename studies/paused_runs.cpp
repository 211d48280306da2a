#include "studies/paused_runs.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "base/run_keys.hpp"

namespace april::studies {
namespace {

std::string scenario_but_steps(const base::Config& config) {
  auto keys = config.resolved();
  keys.erase(base::keys::kSteps.name);
  return keys.dump();
}

}  // namespace

void PausedRuns::keep(const std::string& name, const base::Config& config, std::unique_ptr<scenario::Simulation> sim) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (kept_.count(name) != 0) throw std::logic_error(fmt::format("PausedRuns: a run is already kept as '{}'", name));
  if (held_bytes_ + sim->estimated_bytes() > budget_bytes_) return;
  held_bytes_ += sim->estimated_bytes();
  kept_.emplace(name, Kept{scenario_but_steps(config), std::move(sim)});
}

std::unique_ptr<scenario::Simulation> PausedRuns::take(const std::string& name, const base::Config& config) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = kept_.find(name);
  if (it == kept_.end()) return nullptr;
  if (it->second.scenario != scenario_but_steps(config)) {
    throw std::logic_error(fmt::format("PausedRuns: the run kept as '{}' was built from another scenario", name));
  }
  auto sim = std::move(it->second.sim);
  held_bytes_ -= sim->estimated_bytes();
  kept_.erase(it);
  return sim;
}

void PausedRuns::clear() {
  const std::lock_guard<std::mutex> lock(mutex_);
  kept_.clear();
  held_bytes_ = 0;
}

std::size_t PausedRuns::size() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return kept_.size();
}

}  // namespace april::studies
