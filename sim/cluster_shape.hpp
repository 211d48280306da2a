#pragma once
// How the cluster's GPUs are used (docs/design.md section 3b). Colocated: rollout,
// train and sync take turns on all `cluster.gpus`. Disaggregated: the engines
// live on `cluster.rollout_gpus` (engines = rollout_gpus / TP) and the trainer
// on `cluster.train_gpus`, and the two can work at the same time.
#include <cstdint>
#include <string>

#include "base/config.hpp"

namespace april::sim {

class ScenarioInputs;

enum class ClusterMode { Colocated, Disaggregated };

struct ClusterShape {
  ClusterMode mode = ClusterMode::Colocated;
  std::int64_t gpus = 0;           // the whole budget, what GPU-hours are charged on
  std::int64_t gpus_per_node = 8;  // the accelerator's node
  std::int64_t nodes = 1;          // ceil(gpus / gpus_per_node); the trainer's nodes first, then the engines' (disaggregated)
  std::int64_t tensor_parallel = 1;
  std::int64_t engines = 0;
  std::int64_t rollout_gpus = 0;  // engines x TP
  std::int64_t train_gpus = 0;    // the GPUs a train step runs on
  // Disaggregated on several nodes: the trainer's GPUs first and the engines'
  // after them (false), or every node split alike, its first train_gpus /
  // nodes GPUs the trainer's (true: verl's resource pools of
  // trainer.n_gpus_per_node and rollout.n_gpus_per_node on every node).
  bool per_node_split = false;
  [[nodiscard]] bool disaggregated() const { return mode == ClusterMode::Disaggregated; }
  // Whether GPU `g` (node-major: node g / gpus_per_node) is the trainer's.
  [[nodiscard]] bool trainer_gpu(std::int64_t g) const;
};

void declare_cluster_mode_knobs(base::ConfigSchema& schema);

// Resolves and checks the split; throws base::ConfigError naming the keys
// when they do not add up. With cluster.nodes set, the budget is nodes x the
// accelerator's GPUs per node; on more than one node, engines sit inside a node
// (or span whole nodes); disaggregated, a node may hold GPUs of both pools.
// `inputs`: the accelerator's node size (sim/scenario_inputs.hpp).
ClusterShape cluster_shape(const base::Config& config, const ScenarioInputs& inputs);
ClusterShape cluster_shape(const base::Config& config);
// The GPU budget: cluster.nodes x gpus_per_node when nodes are set, else cluster.gpus.
std::int64_t cluster_gpus(const base::Config& config, std::int64_t gpus_per_node);

std::string describe(const ClusterShape& shape);

// Colocated, with fewer GPUs in engines than in the cluster: the GPUs that
// no engine holds sit idle through every rollout (they only train). A line
// that says so and how to use them, or empty when every GPU rolls out.
std::string idle_gpus_note(const ClusterShape& shape);

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::StringKey kClusterMode{"cluster.mode"};
inline constexpr base::IntKey kClusterNodes{"cluster.nodes"};
inline constexpr base::IntKey kClusterRolloutGpus{"cluster.rollout_gpus"};
inline constexpr base::IntKey kClusterTrainGpus{"cluster.train_gpus"};
inline constexpr base::StringKey kClusterSplitPlacement{"cluster.split_placement"};
}  // namespace keys

}  // namespace april::sim
