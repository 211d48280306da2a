#pragma once
// How `april plan` runs its plans: a race, or every plan in full.
//
// The race is successive halving over steps and seeds, with common random
// numbers throughout. Every plan first runs one seed for a fifth of the
// steps; within each design (policy) the plans more than kScreenMargin
// behind the design's best there, or past its kScreenKeep best and not
// within kScreenTie of it, stop, and
// so does a plan that breaks a constraint already. The rest run that seed
// over every step, and the same rule stops them again (kFullSeedMargin).
// The rest run every seed in full, with the seeds an exhaustive search
// gives them, so their figures are the exhaustive search's own. Where a
// design's finalist is then dropped by a constraint, or fails, its plans
// that had been stopped ahead of its best finalist still standing (at the
// rung that stopped them), or with none standing its best ones stopped
// last, run on from there, until none is left: each design's best is the
// exhaustive search's, unless a plan ran more than the margin below its
// true standing, or broke a constraint on its first seed that the mean
// over all its seeds keeps.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "studies/plan.hpp"
#include "studies/run_batch.hpp"
#include "studies/tuner.hpp"

namespace april::studies {

// A screening run within this share of its design's best goes on: a fifth
// of the steps misjudges a plan by up to about 12 points (an elastic split
// 10.2% behind there ended 2% ahead of the plan that led it).
inline constexpr double kScreenMargin = 0.15;
// At most this many plans of one design go on from a screening, but for
// those within kScreenTie of the design's best: one seed's short run cannot
// order plans that close (an elastic split 1% behind at a fifth of the steps
// ended 3% ahead over all of them), so they all go on.
inline constexpr std::size_t kScreenKeep = 2;
// The first screening, a fifth of the steps, keeps one more: an overlapping
// design's pipeline may still be filling there (an elastic split third at 4
// of 20 steps was its design's best over all of them).
inline constexpr std::size_t kFirstScreenKeep = 3;
inline constexpr double kScreenTie = 0.02;
// After the screening run of one seed over every step, a plan within this
// share of its design's best there goes on to its other seeds.
inline constexpr double kFullSeedMargin = 0.03;

struct PlanSearchOptions {
  bool exhaustive = false;              // every plan, every seed, every step
  std::vector<Constraint> constraints;  // those the screening stops a plan by
};

struct PlanSearch {
  // Per candidate, one metrics map per seed of its full runs (empty: not
  // run in full: excluded, failed or stopped).
  std::vector<std::vector<std::map<std::string, double>>> metrics;
  // Per candidate, why it stopped at the screening ("" where it did not).
  std::vector<std::string> stopped;
  std::int64_t simulations = 0;      // started, of any length (one going on from a kept run is not another)
  double simulated_steps = 0;        // their steps, summed
  double exhaustive_steps = 0;       // what the exhaustive search simulates
  std::int64_t screening_steps = 0;  // 0: no screening rung
};

// Progress: runs finished, and the runs known so far (it grows by rung).
using PlanSearchProgress = std::function<void(std::int64_t finished, std::int64_t total)>;

// Runs `candidates` (enumerate_plans; each with its seeds' configurations).
// A run that fails excludes its candidate, with the simulator's words
// (`excluded` set, as a check's refusal is).
PlanSearch search_plans(std::vector<PlanCandidate>& candidates, const PlanSearchOptions& options, RunExecutor& executor,
                        const RunContext& context, const PlanSearchProgress& progress);

// The screening's decision for one rung, public for tests: for each of
// `alive` (indices into `candidates`) with its mean screening metrics,
// "" when it goes on, or why it stops.
std::vector<std::string> screen_plans(const std::vector<PlanCandidate>& candidates, const std::vector<std::size_t>& alive,
                                      const std::vector<std::map<std::string, double>>& screened,
                                      const std::vector<Constraint>& constraints, const std::string& what_ran,
                                      double margin = kScreenMargin, std::size_t keep = kScreenKeep);

}  // namespace april::studies
