#pragma once
// Non-negative least squares: min ||A x - y||^2 subject to x >= 0, by the
// active-set method of Lawson and Hanson ("Solving Least Squares Problems",
// 1974, chapter 23). The calibration fits cost coefficients with it: a
// negative cost per token would be meaningless, and dropping every negative
// column at once (what a heuristic does) can miss the optimum.
#include <vector>

namespace april::studies {

// Rows of `a` are equations; every row must have the same number of columns.
// Throws std::invalid_argument on an empty or ragged system.
std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& a, const std::vector<double>& y);

}  // namespace april::studies
