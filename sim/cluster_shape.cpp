#include "sim/cluster_shape.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/engine_knobs.hpp"
#include "sim/hardware.hpp"
#include "sim/scenario_inputs.hpp"

namespace april::sim {

void declare_cluster_mode_knobs(base::ConfigSchema& s) {
  using base::KnobType;
  s.add({keys::kClusterNodes.name, KnobType::Int, std::int64_t{0}, "nodes",
         "nodes of the accelerator's GPUs per node (`april hardware show`); the budget is nodes x gpus_per_node; "
         "0 = cluster.gpus",
         base::in_range(0, 1 << 16)});
  s.add({keys::kClusterMode.name, KnobType::String, std::string("colocated"), "",
         "colocated: rollout, train and sync take turns on cluster.gpus; disaggregated: engines on cluster.rollout_gpus, "
         "the trainer on cluster.train_gpus, working at the same time",
         base::one_of({"colocated", "disaggregated"})});
  s.add({keys::kClusterRolloutGpus.name, KnobType::Int, std::int64_t{0}, "GPUs",
         "disaggregated: the engines' GPUs (engines = rollout_gpus / cluster.tensor_parallel); 0 = cluster.gpus - "
         "cluster.train_gpus when that is set, else cluster.engines x TP when cluster.engines is set, else half of "
         "cluster.gpus rounded down to a multiple of the TP",
         base::in_range(0, 1 << 20)});
  s.add({keys::kClusterTrainGpus.name, KnobType::Int, std::int64_t{0}, "GPUs",
         "disaggregated: the trainer's GPUs; 0 = cluster.gpus - cluster.rollout_gpus", base::in_range(0, 1 << 20)});
  s.add({keys::kClusterSplitPlacement.name, KnobType::String, std::string("pools"), "",
         "disaggregated on several nodes: pools (the trainer's GPUs first, the engines' after them, a node shared only "
         "where a pool ends inside it) or per_node (every node split alike: train_gpus / nodes trainer GPUs and "
         "rollout_gpus / nodes engine GPUs on each, as verl's trainer.n_gpus_per_node and rollout.n_gpus_per_node place them)",
         base::one_of({"pools", "per_node"})});
}

bool ClusterShape::trainer_gpu(std::int64_t g) const {
  if (!disaggregated()) return true;
  if (!per_node_split) return g < train_gpus;
  return g % gpus_per_node < train_gpus / nodes;
}

namespace {

// Engines inside a node (or over whole nodes), pools of whole nodes: what
// slime, verl and AReaL place, so that an engine's collectives stay on NVLink.
void check_placement(const ClusterShape& s) {
  if (s.nodes <= 1) return;
  const auto tp = s.tensor_parallel, per = s.gpus_per_node;
  if ((tp <= per && per % tp != 0) || (tp > per && tp % per != 0)) {
    throw base::ConfigError(fmt::format("cluster.tensor_parallel {} neither divides the {} GPUs of a node nor spans whole nodes", tp, per));
  }
  if (!s.disaggregated()) return;
  if (s.per_node_split) {
    if (s.rollout_gpus % s.nodes != 0 || s.train_gpus % s.nodes != 0) {
      throw base::ConfigError(
          fmt::format("cluster.split_placement per_node splits each of the {} nodes alike, but cluster.rollout_gpus "
                      "({}) and cluster.train_gpus ({}) are not both multiples of {}",
                      s.nodes, s.rollout_gpus, s.train_gpus, s.nodes));
    }
    if (tp > per || (s.rollout_gpus / s.nodes) % tp != 0) {
      throw base::ConfigError(
          fmt::format("cluster.split_placement per_node puts {} engine GPUs on each node, which engines at "
                      "cluster.tensor_parallel {} do not fill inside the node",
                      s.rollout_gpus / s.nodes, tp));
    }
    return;
  }
  // Pools: the engines follow the trainer's GPUs and never straddle a node:
  // the budget is whole nodes and rollout_gpus a multiple of the TP, so the
  // trainer's count is one too (a TP over whole nodes leaves it whole nodes).
}

}  // namespace

std::int64_t cluster_gpus(const base::Config& c, std::int64_t gpus_per_node) {
  const auto nodes = c.get(sim::keys::kClusterNodes);
  if (nodes == 0) return c.get(sim::keys::kClusterGpus);
  const auto gpus = nodes * gpus_per_node;
  if (c.is_set("cluster.gpus") && c.get(sim::keys::kClusterGpus) != gpus) {
    throw base::ConfigError(fmt::format("cluster.gpus is {}, but cluster.nodes {} x {} GPUs per node makes {}; set one of them",
                                        c.get(sim::keys::kClusterGpus), nodes, gpus_per_node, gpus));
  }
  return gpus;
}

ClusterShape cluster_shape(const base::Config& c) { return cluster_shape(c, ScenarioInputs(c)); }

ClusterShape cluster_shape(const base::Config& c, const ScenarioInputs& in) {
  ClusterShape s;
  s.gpus_per_node = in.engine_hw().gpus_per_node;
  s.gpus = cluster_gpus(c, s.gpus_per_node);
  s.nodes = (s.gpus + s.gpus_per_node - 1) / s.gpus_per_node;
  s.tensor_parallel = c.get(sim::keys::kClusterTensorParallel);
  const std::int64_t tp = s.tensor_parallel;
  const std::int64_t rollout = c.get(sim::keys::kClusterRolloutGpus), train = c.get(sim::keys::kClusterTrainGpus);
  if (c.get(sim::keys::kClusterMode) == "colocated") {
    if (rollout != 0 || train != 0) {
      throw base::ConfigError(
          fmt::format("cluster.{} is set ({}), but cluster.mode is colocated, where every GPU rolls out and "
                      "trains; set cluster.mode=disaggregated or leave it at 0",
                      rollout != 0 ? "rollout_gpus" : "train_gpus", rollout != 0 ? rollout : train));
    }
    s.engines = c.get(sim::keys::kClusterEngines);
    s.rollout_gpus = s.engines * tp;
    s.train_gpus = s.gpus;
    if (s.rollout_gpus > s.gpus) {
      throw base::ConfigError(fmt::format("cluster.engines ({}) x cluster.tensor_parallel ({}) needs {} GPUs, but cluster.gpus is {}",
                                          s.engines, tp, s.rollout_gpus, s.gpus));
    }
    check_placement(s);
    return s;
  }
  s.mode = ClusterMode::Disaggregated;
  if (rollout != 0) {
    s.rollout_gpus = rollout;
  } else if (train != 0) {
    s.rollout_gpus = s.gpus - train;
  } else if (c.is_set("cluster.engines")) {
    s.rollout_gpus = c.get(sim::keys::kClusterEngines) * tp;
  } else {
    s.rollout_gpus = std::max(tp, s.gpus / 2 / tp * tp);
  }
  s.train_gpus = train != 0 ? train : s.gpus - s.rollout_gpus;
  if (s.rollout_gpus < 1 || s.train_gpus < 1 || s.rollout_gpus + s.train_gpus != s.gpus) {
    throw base::ConfigError(fmt::format("cluster.rollout_gpus ({}) + cluster.train_gpus ({}) must be cluster.gpus ({}), each at least 1{}",
                                        s.rollout_gpus, s.train_gpus, s.gpus,
                                        rollout == 0 && train == 0 ? " (both were derived: raise cluster.gpus)" : ""));
  }
  if (s.rollout_gpus % tp != 0) {
    throw base::ConfigError(fmt::format("cluster.rollout_gpus ({}) is not a multiple of cluster.tensor_parallel ({})", s.rollout_gpus, tp));
  }
  s.engines = s.rollout_gpus / tp;
  s.per_node_split = s.nodes > 1 && c.get(sim::keys::kClusterSplitPlacement) == "per_node";
  // cluster.engines follows from the split; a different explicit value is a contradiction.
  if (c.is_set("cluster.engines") && c.get(sim::keys::kClusterEngines) != s.engines) {
    throw base::ConfigError(
        fmt::format("cluster.engines is {}, but cluster.rollout_gpus ({}) / cluster.tensor_parallel ({}) makes {} "
                    "engines; in disaggregated mode leave cluster.engines unset",
                    c.get(sim::keys::kClusterEngines), s.rollout_gpus, tp, s.engines));
  }
  check_placement(s);
  return s;
}

std::string describe(const ClusterShape& s) {
  const std::string nodes = s.nodes > 1 ? fmt::format(" ({} nodes of {})", s.nodes, s.gpus_per_node) : "";
  if (!s.disaggregated()) {
    return fmt::format("colocated on {} GPUs{}, {} engines at TP {}", s.gpus, nodes, s.engines, s.tensor_parallel);
  }
  return fmt::format("disaggregated{}: {} engines at TP {} on {} GPUs, trainer on {} GPUs", nodes, s.engines, s.tensor_parallel,
                     s.rollout_gpus, s.train_gpus);
}

std::string idle_gpus_note(const ClusterShape& s) {
  if (s.disaggregated() || s.rollout_gpus >= s.gpus) return {};
  const auto idle = s.gpus - s.rollout_gpus;
  return fmt::format(
      "note: {} engines x TP {} hold {} of the {} GPUs; the other {} sit idle through every rollout "
      "(cluster.engines={} uses them all{})",
      s.engines, s.tensor_parallel, s.rollout_gpus, s.gpus, idle, s.gpus / s.tensor_parallel,
      s.gpus % s.tensor_parallel == 0 ? "" : ", but for the GPUs TP does not divide");
}

}  // namespace april::sim
