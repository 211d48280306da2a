#pragma once
// `april plan`: rollout designs head to head on one cluster. A plan
// is a design (a policy), its over-provisioning, the engines' tensor
// parallelism and, for designs that overlap rollout and training, a split of
// the GPUs. Every plan runs with the same seeds (common random numbers); the
// plans are ranked by effective throughput (trained tokens per second of wall
// time, the figure comparable across designs), with staleness beside it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "policies/registry.hpp"
#include "studies/tuner.hpp"

namespace april::studies {

struct PlanSpace {
  std::vector<std::string> policies;  // the designs
  std::vector<double> alphas;         // april's over-provisioning factors (april.alpha)
  // streamrl's long-tail engine counts to try beside its token-share rule
  // (streamrl.tail_engines): StreamRL's Algorithm 2 enumerates the splits.
  std::vector<std::int64_t> tail_engines;
  std::vector<std::int64_t> tensor_parallel;  // engine sizes; empty: the scenario's
  std::size_t max_splits = 6;                 // rollout/train splits per overlapping design
  std::int64_t repeats = 3;                   // seeds per plan
};

struct Plan {
  std::string policy;
  std::optional<double> alpha;  // april only
  std::int64_t tensor_parallel = 0;
  std::int64_t rollout_gpus = 0, train_gpus = 0;  // both 0: colocated
  std::optional<std::int64_t> tail_engines;       // streamrl only; none: its token-share rule
  [[nodiscard]] bool colocated() const { return rollout_gpus == 0; }
  [[nodiscard]] std::string design() const;  // "colocated" or "R+T"
  [[nodiscard]] std::string label() const;   // "april alpha 2, TP 4, colocated", "streamrl tail 4, TP 16, colocated"
};

struct PlanCandidate {
  Plan plan;
  std::vector<base::Config> seeds;  // one validated configuration per seed; empty when excluded
  std::string excluded;             // why this plan is none (memory, placement), as the check said it
  std::string stopped;              // why the race stopped it at its screening (plan_search.hpp); "" when not
};

// Every plan of the space on `base`'s GPU budget: policies that overlap
// rollout and training on split_candidates() splits, the others colocated on
// every GPU (cluster.engines = GPUs / TP). A plan whose configuration fails
// its checks (an engine whose weights do not fit its GPUs, a split that cuts
// an engine across nodes) is kept with the reason, not run.
std::vector<PlanCandidate> enumerate_plans(const base::Config& base, const policies::PolicyRegistry& registry, const PlanSpace& space);

struct PlanResult {
  Plan plan;
  std::string excluded;
  std::string stopped;  // the race's screening stopped it (plan_search.hpp)
  [[nodiscard]] bool ran() const { return excluded.empty() && stopped.empty(); }
  std::int64_t seeds = 0;
  double throughput_tok_s = 0, throughput_ci95 = 0;  // effective throughput: mean over seeds, Student-t 95% half-width
  double staleness_mean = 0, offpolicy_fraction = 0;
  double step_s = 0, rollout_s = 0, train_s = 0, sync_s = 0;  // per step
  double engine_busy = 0, trainer_busy = 0;
  double trainer_lent = 0;  // elastic: share of the wall time the trainer's GPUs served rollout
  double wall_s = 0;        // simulation wall time, summed over seeds
  std::string reason;
};

// Summaries of each run's metrics (rl::summary_json's numbers), one vector per
// candidate in enumerate_plans' order; excluded candidates take an empty one.
// Returns every plan, the run ones by effective throughput (highest first,
// ties by label), then those the race stopped, then the excluded ones; each
// with its one-line reason.
std::vector<PlanResult> rank_plans(const std::vector<PlanCandidate>& candidates,
                                   const std::vector<std::vector<std::map<std::string, double>>>& metrics);

// Where the best plan's over-provisioning or engine size is the largest or
// smallest value searched, a better one may lie beyond the grid: one line
// each, naming the value and the next one to try. Empty when it is inside.
std::vector<std::string> edge_of_grid_notes(const Plan& best, const PlanSpace& space);

// `april plan`'s constraint when none is given: at most 4 policy versions
// between the weights that generated a trained token and those it trains
// (the bound AReaL's asynchronous guide sets, rollout.max_head_offpolicyness
// 4: inclusionai.github.io/AReaL/algorithms/async.html). A team that
// accepts less says so (staleness_max<=1 keeps one-step-off designs and
// sync); `--constraint none` searches without any.
inline constexpr const char* kDefaultPlanConstraint = "staleness_max<=4";

// Drops every plan that ran but whose mean over its seeds breaks one of
// `constraints` (metric names already resolved): its metrics cleared, and
// `excluded` naming the constraint and the plan's value.
void apply_plan_constraints(std::vector<PlanCandidate>& candidates, std::vector<std::vector<std::map<std::string, double>>>& metrics,
                            const std::vector<Constraint>& constraints);

// A run's metric by its summary.json name; 0 where the run has none (a
// metric of another design, such as trainer_lent_fraction); a name that is
// no run metric at all is a logic_error.
double plan_metric(const std::map<std::string, double>& m, const std::string& key);

// The best plan of each policy, in the order of the ranking.
std::vector<const PlanResult*> best_per_design(const std::vector<PlanResult>& ranked);

}  // namespace april::studies
