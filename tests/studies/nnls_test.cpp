// The non-negative least squares solver the calibration fits with
// (studies/nnls.hpp), against optima worked by hand and by brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "base/rng.hpp"
#include "studies/nnls.hpp"

namespace april::studies {
namespace {

// The squared residual |a x - y|^2.
double residual(const std::vector<std::vector<double>>& a, const std::vector<double>& y, const std::vector<double>& x) {
  double r = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    double p = -y[i];
    for (std::size_t j = 0; j < x.size(); ++j) p += a[i][j] * x[j];
    r += p * p;
  }
  return r;
}

// The solver this replaced dropped every negative coefficient at once and
// never let a column back in: here it dropped x0, which the optimum needs, and
// returned (0, 0, 19/31) with residual 18.35. The optimum, worked by
// enumerating the active sets, is (151/86, 0, 2/43) with residual 9.80.
TEST(Nnls, FindsTheOptimumADropAllNegativesHeuristicMisses) {
  const std::vector<std::vector<double>> a = {{1, 3, 3}, {2, 0, 2}, {0, 3, 3}, {1, 3, 3}};
  const std::vector<double> y = {1, 5, 2, 0};
  const auto x = nonnegative_least_squares(a, y);
  EXPECT_NEAR(x[0], 151.0 / 86.0, 1e-9);
  EXPECT_NEAR(x[1], 0.0, 1e-12);
  EXPECT_NEAR(x[2], 2.0 / 43.0, 1e-9);
  EXPECT_NEAR(residual(a, y, x), 9.802325581395349, 1e-9);
}

// Features of very different scales (seconds per request against per KV
// token): the same problem with columns scaled by 1e-6 and 1e5 has the same
// solution, scaled back.
TEST(Nnls, ColumnScaleDoesNotChangeTheSolution) {
  const std::vector<std::vector<double>> a = {{1e-6, 3, 3e5}, {2e-6, 0, 2e5}, {0, 3, 3e5}, {1e-6, 3, 3e5}};
  const std::vector<double> y = {1e-4, 5e-4, 2e-4, 0};
  const auto x = nonnegative_least_squares(a, y);
  EXPECT_NEAR(x[0] * 1e-6 / 1e-4, 151.0 / 86.0, 1e-7);
  EXPECT_NEAR(x[1], 0.0, 1e-15);
  EXPECT_NEAR(x[2] * 1e5 / 1e-4, 2.0 / 43.0, 1e-7);
}

// Unconstrained least squares on a few columns by the normal equations and
// Gaussian elimination: independent of the solver under test.
std::optional<std::vector<double>> plain_least_squares(const std::vector<std::vector<double>>& a, const std::vector<double>& y) {
  const std::size_t n = a.front().size();
  std::vector<std::vector<double>> m(n, std::vector<double>(n + 1, 0.0));
  for (std::size_t r = 0; r < a.size(); ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) m[i][j] += a[r][i] * a[r][j];
      m[i][n] += a[r][i] * y[r];
    }
  }
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r) {
      if (std::fabs(m[r][c]) > std::fabs(m[piv][c])) piv = r;
    }
    std::swap(m[c], m[piv]);
    if (std::fabs(m[c][c]) < 1e-12) return std::nullopt;
    for (std::size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (std::size_t j = c; j <= n; ++j) m[r][j] -= f * m[c][j];
    }
  }
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = m[i][n] / m[i][i];
  return x;
}

// On random systems, the solution is the best of every feasible active-set
// solution: the unconstrained fit on each subset of columns, kept when all its
// coefficients are >= 0 (brute force over the 2^n subsets).
TEST(Nnls, MatchesBruteForceOverActiveSets) {
  base::Rng rng(7, "nnls");
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t m = 6, n = 4;
    std::vector<std::vector<double>> a(m, std::vector<double>(n));
    std::vector<double> y(m);
    for (auto& row : a) {
      for (auto& v : row) v = rng.uniform(-1, 1);
    }
    for (auto& v : y) v = rng.uniform(-2, 2);
    const auto x = nonnegative_least_squares(a, y);
    for (double v : x) ASSERT_GE(v, 0.0);
    double best = residual(a, y, std::vector<double>(n, 0.0));
    for (unsigned mask = 1; mask < (1U << n); ++mask) {
      std::vector<std::vector<double>> sub(m);
      std::vector<std::size_t> cols;
      for (std::size_t j = 0; j < n; ++j) {
        if (mask & (1U << j)) cols.push_back(j);
      }
      for (std::size_t i = 0; i < m; ++i) {
        for (auto j : cols) sub[i].push_back(a[i][j]);
      }
      const auto xs = plain_least_squares(sub, y);
      if (!xs || std::any_of(xs->begin(), xs->end(), [](double v) { return v < 0; })) continue;
      std::vector<double> full(n, 0.0);
      for (std::size_t c = 0; c < cols.size(); ++c) full[cols[c]] = (*xs)[c];
      best = std::min(best, residual(a, y, full));
    }
    EXPECT_NEAR(residual(a, y, x), best, 1e-9) << "trial " << trial;
  }
}

TEST(Nnls, RejectsEmptyAndRaggedSystems) {
  EXPECT_THROW(nonnegative_least_squares({}, {}), std::invalid_argument);
  EXPECT_THROW(nonnegative_least_squares({{1, 2}, {3}}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(nonnegative_least_squares({{1, 2}}, {1, 2}), std::invalid_argument);
}

}  // namespace
}  // namespace april::studies
