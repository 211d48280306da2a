#pragma once
// The train, weight-sync and topology scenario keys, declared beside the code
// that reads them: a scenario's train-time model and weight-sync time.
#include <functional>
#include <optional>
#include <string>

#include "base/config.hpp"
#include "sim/cost_model.hpp"
#include "sim/topology.hpp"

namespace april::sim {

void declare_train_sync_knobs(base::ConfigSchema& schema);

// The phases of one train step on a batch of that shape (one phase, other_s,
// for the flops and linear models); empty for train.time_model=zero.
using TrainTimeModel = std::function<TrainPhaseTimes(const TrainBatchShape&)>;
TrainTimeModel train_time_model(const base::Config& config);
// The trainer's layout and PPO settings (train.*) on the scenario's GPUs.
TrainerSetup trainer_setup(const base::Config& config);

// Weight-sync time per step: from the topology when one is given (preset or
// file), else weight bytes over sync.bandwidth_GB_s; plus sync.latency_s.
struct WeightSync {
  double time_s = 0;
  std::string how;
};
WeightSync weight_sync(const base::Config& config);
std::optional<Topology> scenario_topology(const base::Config& config);

}  // namespace april::sim
