#pragma once
// Tuning one scenario parameter (e.g. april.alpha) for an objective under
// constraints, on a noisy simulator.
//
// Search: grid refinement with replicates and common random numbers. Round 1
// evaluates `points` evenly spaced values over the range; each later round
// halves the spacing and evaluates the two new neighbours of the best feasible
// point so far. Every value is run with the same R seeds, so the workload is
// identical across values and seed noise largely cancels when means are
// compared; the mean over seeds decides, and its 95% confidence interval
// (Student t) says how sure that is. This needs points + 2 * (rounds - 1)
// values instead of the (points - 1) * 2^(rounds - 1) + 1 of a grid at the final
// spacing, uses no derivative (which noise would swamp), and never trusts a
// single noisy run.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace april::studies {

struct Constraint {
  std::string metric;
  std::string op;  // <=, <, >=, >
  double limit = 0;
  std::string text;
  [[nodiscard]] bool holds(double value) const;
};
Constraint parse_constraint(const std::string& text);  // "staleness_max<=4", "buffer_peak_tokens<=2e6"

struct TuneSpec {
  double lo = 1, hi = 4;
  std::int64_t points = 5;   // first-round grid
  std::int64_t rounds = 5;   // refinement rounds, the first included
  std::int64_t repeats = 3;  // seeds per value
  std::string objective;     // a summary metric
  bool maximize = true;
  std::vector<Constraint> constraints;
  // A key on a lattice (an integer key: 1; the rollout GPUs of a split: the
  // tensor parallelism): every value tried is lo + k x lattice (lo and hi
  // must be on it), and refinement stops once no new lattice point is left.
  // 0: a continuous key.
  std::int64_t lattice = 0;
};

struct TunePoint {
  double x = 0;
  std::vector<std::map<std::string, double>> runs;  // one per seed
  double mean = 0, ci95 = 0;                        // objective over seeds
  std::map<std::string, double> metric_means;
  bool feasible = true;
  std::vector<std::string> violated;
};

struct TuneResult {
  std::vector<TunePoint> curve;  // every value evaluated, ascending
  std::optional<std::size_t> best;
  std::vector<std::string> binding;                           // constraints the nearest better value violates
  double indistinguishable_lo = 0, indistinguishable_hi = 0;  // values whose CI overlaps the best's
  std::int64_t runs = 0;
};

// The values of the first round (rounded and deduplicated for an integer key).
// Every later value lies between lo and hi, on the same grid refined.
std::vector<double> first_round_values(const TuneSpec& spec);

// Evaluates each x with every seed; returns metrics per (x, seed), x-major.
using TuneEvaluate = std::function<std::vector<std::map<std::string, double>>(const std::vector<double>& xs)>;

TuneResult tune(const TuneSpec& spec, const TuneEvaluate& evaluate);

// Student-t 97.5% quantile for `dof` degrees of freedom.
double t975(std::int64_t dof);

// Resolves "rollout_throughput" to "rollout_throughput_tok_s" and the like,
// against the names a run reports; throws naming the known metrics.
std::string resolve_metric(const std::string& name, const std::map<std::string, double>& metrics);

}  // namespace april::studies
