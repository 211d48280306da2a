#include "scenario/design_space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/cluster_shape.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/train_sync_knobs.hpp"

namespace april::scenario {
namespace {

// A disaggregated split; cluster.engines then follows from it.
void set_split(base::Config& c, std::int64_t rollout_gpus, std::int64_t train_gpus, const std::string& where) {
  c.set("cluster.mode", std::string("disaggregated"), where);
  c.unset("cluster.engines");
  c.set("cluster.rollout_gpus", rollout_gpus, where);
  c.set("cluster.train_gpus", train_gpus, where);
}

}  // namespace

void apply_design(base::Config& c, const std::string& design, const std::string& where) {
  if (design == "colocated") {
    c.set("cluster.mode", std::string("colocated"), where);
    c.unset("cluster.rollout_gpus");
    c.unset("cluster.train_gpus");
    return;
  }
  const auto plus = design.find('+');
  std::int64_t rollout = 0, train = 0;
  bool ok = plus != std::string::npos && plus > 0 && plus + 1 < design.size() &&
            design.find_first_not_of("0123456789+") == std::string::npos && design.find('+', plus + 1) == std::string::npos;
  if (ok) {
    try {
      rollout = std::stoll(design.substr(0, plus));
      train = std::stoll(design.substr(plus + 1));
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok || rollout < 1 || train < 1) {
    throw base::ConfigError(fmt::format("{}: design '{}': expected colocated or R+T (rollout GPUs + train GPUs, e.g. 6+2)", where, design));
  }
  set_split(c, rollout, train, where);
}

bool policy_overlaps(const base::Config& config, const policies::PolicyRegistry& registry, const std::string& policy) {
  return registry.get(policy).make(config)->overlaps();
}

bool any_policy_overlaps(const base::Config& config, const policies::PolicyRegistry& registry, const std::vector<std::string>& policies) {
  return std::any_of(policies.begin(), policies.end(), [&](const std::string& p) { return policy_overlaps(config, registry, p); });
}

std::optional<std::string> not_a_design(const base::Config& c, const policies::PolicyRegistry& registry, const std::string& policy) {
  if (c.get(sim::keys::kClusterMode) != "colocated") return std::nullopt;
  if (c.get(sim::keys::kClusterRolloutGpus) != 0 || c.get(sim::keys::kClusterTrainGpus) != 0) {
    return std::string("a colocated cluster has no rollout/train split");
  }
  if (policy_overlaps(c, registry, policy))
    return fmt::format("{} overlaps rollout and training, which a colocated cluster cannot", policy);
  return std::nullopt;
}

std::vector<std::int64_t> split_candidates(const base::Config& c, std::size_t max_splits) {
  return split_candidates(c, sim::ScenarioInputs(c), max_splits);
}

std::vector<std::int64_t> split_candidates(const base::Config& c, const sim::ScenarioInputs& inputs, std::size_t max_splits) {
  const auto shape = sim::cluster_shape(c, inputs);
  const std::int64_t gpus = shape.gpus, tp = shape.tensor_parallel;
  // On several nodes each pool takes whole nodes (sim::cluster_shape).
  const std::int64_t step = shape.nodes > 1 ? std::lcm(tp, shape.gpus_per_node) : tp;
  // The trainer's parallel layout (phases model) must divide its share.
  const std::int64_t train_multiple = c.get(sim::keys::kTrainTimeModel) == "phases" ? sim::trainer_setup(c, inputs).gpu_multiple() : 1;
  std::vector<std::int64_t> all;
  for (std::int64_t r = step; r < gpus; r += step) {
    if ((gpus - r) % train_multiple == 0) all.push_back(r);
  }
  if (all.size() <= max_splits || max_splits < 2) return all;
  std::vector<std::int64_t> picked;
  const double stride = static_cast<double>(all.size() - 1) / static_cast<double>(max_splits - 1);
  for (std::size_t i = 0; i < max_splits; ++i) {
    const auto idx = static_cast<std::size_t>(std::llround(stride * static_cast<double>(i)));
    if (picked.empty() || picked.back() != all[idx]) picked.push_back(all[idx]);
  }
  return picked;
}

base::Config on_split(const base::Config& config, std::int64_t rollout_gpus) {
  return on_split(config, sim::ScenarioInputs(config), rollout_gpus);
}

base::Config on_split(const base::Config& config, const sim::ScenarioInputs& inputs, std::int64_t rollout_gpus) {
  base::Config c = config;
  set_split(c, rollout_gpus, sim::cluster_shape(c, inputs).gpus - rollout_gpus, "split");
  return c;
}

SplitSearch fastest_split(const base::Config& config, const policies::PolicyRegistry& registry, const std::string& policy,
                          const RunOptions& options) {
  // The caller's inputs where they are this config's, else its own, for every split.
  const bool given = options.inputs != nullptr && options.inputs->resolved_from(config);
  const sim::ScenarioInputs inputs = given ? *options.inputs : sim::ScenarioInputs(config);
  std::optional<RunOptions> own;
  if (!given) {
    own = options;
    own->inputs = &inputs;
  }
  const RunOptions& run_options = given ? options : *own;
  const auto candidates = split_candidates(config, inputs);
  if (candidates.empty()) {
    throw base::ConfigError(
        fmt::format("policy '{}' needs separate rollout and train GPUs, but cluster.gpus ({}) at "
                    "cluster.tensor_parallel {} leaves no split with whole engines and a trainer its "
                    "parallel layout divides (train.* parallel sizes)",
                    policy, sim::cluster_shape(config, inputs).gpus, config.get(sim::keys::kClusterTensorParallel)));
  }
  SplitSearch s;
  for (const std::int64_t r : candidates) {
    const base::Config c = on_split(config, inputs, r);
    RunResult run = simulate(c, registry, policy, run_options);
    const auto shape = sim::cluster_shape(c, inputs);
    const double step_time_s =
        rl::derive(run.summary.totals).total_time_s / static_cast<double>(std::max<std::int64_t>(1, run.summary.steps));
    s.trials.push_back({shape.rollout_gpus, shape.train_gpus, step_time_s});
    if (s.trials.size() == 1 || step_time_s < s.trials[s.best].step_time_s) {
      s.best = s.trials.size() - 1;
      s.run = std::move(run);
      s.shape = shape;
    }
  }
  return s;
}

}  // namespace april::scenario
