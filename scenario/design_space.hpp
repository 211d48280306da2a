#pragma once
// Designs on one GPU budget (docs/design.md section 3b): a colocated cluster, or a
// split of the same GPUs into rollout and train GPUs. A policy that overlaps
// rollout and training (one_step_off, async) exists only on a split; a
// colocated cluster has no split to set. `april simulate` runs an overlapping
// policy on the fastest split of a colocated scenario's GPUs; `whatif` skips
// the combinations that are no design, saying which and why.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "policies/registry.hpp"
#include "scenario/simulation.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/scenario_inputs.hpp"

namespace april::scenario {

// The grid key `design` of whatif and sweep: one axis for the cluster's use
// of its GPUs. "colocated" sets cluster.mode=colocated (and clears any
// split); "R+T" (e.g. "6+2")
// sets cluster.mode=disaggregated, cluster.rollout_gpus=R, cluster.train_gpus=T
// (cluster_shape() then checks that R+T is cluster.gpus and R whole engines).
inline constexpr const char* kDesignKey = "design";
void apply_design(base::Config& config, const std::string& design, const std::string& where);

// Whether `policy` overlaps rollout and training (needs a disaggregated cluster).
bool policy_overlaps(const base::Config& config, const policies::PolicyRegistry& registry, const std::string& policy);
// Whether any of `policies` does.
bool any_policy_overlaps(const base::Config& config, const policies::PolicyRegistry& registry, const std::vector<std::string>& policies);

// Why (config, policy) is no design, or nothing when it is one: an
// overlapping policy on a colocated cluster, or a colocated cluster given a
// split (cluster.rollout_gpus or cluster.train_gpus).
std::optional<std::string> not_a_design(const base::Config& config, const policies::PolicyRegistry& registry, const std::string& policy);

// The rollout GPU counts a split of cluster.gpus can have: whole engines
// (multiples of cluster.tensor_parallel) and at least one train GPU. When
// there are more than `max_splits`, `max_splits` of them evenly spaced, the
// smallest and largest included. Empty when cluster.gpus allows no split.
// `inputs`: resolved from `config`; without them, its own are resolved.
std::vector<std::int64_t> split_candidates(const base::Config& config, const sim::ScenarioInputs& inputs, std::size_t max_splits = 16);
std::vector<std::int64_t> split_candidates(const base::Config& config, std::size_t max_splits = 16);

// `config` on a disaggregated split with `rollout_gpus` rollout GPUs and the
// rest training (cluster.engines follows from the split).
base::Config on_split(const base::Config& config, const sim::ScenarioInputs& inputs, std::int64_t rollout_gpus);
base::Config on_split(const base::Config& config, std::int64_t rollout_gpus);

struct SplitTrial {
  std::int64_t rollout_gpus = 0, train_gpus = 0;
  double step_time_s = 0;  // mean over the run's steps
};

struct SplitSearch {
  std::vector<SplitTrial> trials;  // ascending rollout_gpus
  std::size_t best = 0;            // least step time; ties: fewer rollout GPUs
  RunResult run;                   // the best split's run
  sim::ClusterShape shape;         // the best split's cluster
};

// Runs `policy` on every split_candidates() split of `config`'s GPUs, same
// seed and workload, and keeps the one with the least time per step. The
// choice is made on the run it reports (one seed): `april tune --param
// cluster.rollout_gpus` makes it over several seeds, with constraints.
// Every split runs on `options.inputs` where they are `config`'s.
SplitSearch fastest_split(const base::Config& config, const policies::PolicyRegistry& registry, const std::string& policy,
                          const RunOptions& options = {});

}  // namespace april::scenario
