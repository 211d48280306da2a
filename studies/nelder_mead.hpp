#pragma once
// A derivative-free minimizer for the few parameters of a component fit
// (Nelder and Mead 1965, with the standard coefficients 1, 2, 0.5, 0.5).
// Deterministic: the same start and function give the same answer.
#include <functional>
#include <vector>

namespace april::studies {

struct NelderMeadResult {
  std::vector<double> x;
  double value = 0;
  int evaluations = 0;
};

// Minimizes f from `start`, the first simplex stepping `step[i]` along each
// axis, until the simplex's values differ by less than `tolerance` or
// `max_evaluations` is spent.
NelderMeadResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> start,
                             const std::vector<double>& step, double tolerance = 1e-9, int max_evaluations = 4000);

}  // namespace april::studies
