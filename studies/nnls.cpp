#include "studies/nnls.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace april::studies {
namespace {

using Matrix = std::vector<std::vector<double>>;

// Unconstrained least squares over the columns marked in `passive` (others
// are 0), by Householder QR of those columns: better conditioned than the
// normal equations, and a column dependent on earlier ones gets 0.
std::vector<double> solve_passive(const Matrix& a, const std::vector<double>& y, const std::vector<bool>& passive) {
  std::vector<std::size_t> cols;
  for (std::size_t j = 0; j < passive.size(); ++j) {
    if (passive[j]) cols.push_back(j);
  }
  const std::size_t m = a.size(), k = cols.size();
  Matrix r(m, std::vector<double>(k));
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t c = 0; c < k; ++c) r[i][c] = a[i][cols[c]];
  }
  std::vector<double> b = y;
  std::vector<bool> usable(k, false);
  double scale = 0;
  for (const auto& row : r) {
    for (double v : row) scale = std::max(scale, std::fabs(v));
  }
  const double tiny = std::max(scale, 1.0) * static_cast<double>(std::max(m, k)) * std::numeric_limits<double>::epsilon() * 16;
  std::size_t row = 0;  // next pivot row
  std::vector<std::size_t> pivot_row(k, 0);
  for (std::size_t c = 0; c < k && row < m; ++c) {
    double norm = 0;
    for (std::size_t i = row; i < m; ++i) norm += r[i][c] * r[i][c];
    norm = std::sqrt(norm);
    if (norm <= tiny) continue;  // dependent on the columns before it
    const double alpha = r[row][c] > 0 ? -norm : norm;
    std::vector<double> v(m - row);
    for (std::size_t i = row; i < m; ++i) v[i - row] = r[i][c];
    v[0] -= alpha;
    double vv = 0;
    for (double e : v) vv += e * e;
    if (vv > 0) {
      for (std::size_t cc = c; cc < k; ++cc) {
        double d = 0;
        for (std::size_t i = row; i < m; ++i) d += v[i - row] * r[i][cc];
        const double f = 2 * d / vv;
        for (std::size_t i = row; i < m; ++i) r[i][cc] -= f * v[i - row];
      }
      double d = 0;
      for (std::size_t i = row; i < m; ++i) d += v[i - row] * b[i];
      const double f = 2 * d / vv;
      for (std::size_t i = row; i < m; ++i) b[i] -= f * v[i - row];
    }
    usable[c] = true;
    pivot_row[c] = row++;
  }
  // Back substitution over the usable columns (upper triangular in pivot rows).
  std::vector<double> z(k, 0.0);
  for (std::size_t cc = k; cc-- > 0;) {
    if (!usable[cc]) continue;
    const std::size_t i = pivot_row[cc];
    double s = b[i];
    for (std::size_t c2 = cc + 1; c2 < k; ++c2) {
      if (usable[c2]) s -= r[i][c2] * z[c2];
    }
    z[cc] = s / r[i][cc];
  }
  std::vector<double> x(passive.size(), 0.0);
  for (std::size_t c = 0; c < k; ++c) x[cols[c]] = z[c];
  return x;
}

// w = A^T (y - A x): the negative gradient of the objective / 2.
std::vector<double> dual(const Matrix& a, const std::vector<double>& y, const std::vector<double>& x) {
  std::vector<double> w(x.size(), 0.0);
  for (std::size_t i = 0; i < a.size(); ++i) {
    double res = y[i];
    for (std::size_t j = 0; j < x.size(); ++j) res -= a[i][j] * x[j];
    for (std::size_t j = 0; j < x.size(); ++j) w[j] += a[i][j] * res;
  }
  return w;
}

}  // namespace

std::vector<double> nonnegative_least_squares(const Matrix& a_in, const std::vector<double>& y) {
  if (a_in.empty() || a_in.front().empty()) throw std::invalid_argument("least squares with no equations or no unknowns");
  if (a_in.size() != y.size()) throw std::invalid_argument("least squares: as many right-hand sides as equations needed");
  const std::size_t n = a_in.front().size();
  for (const auto& row : a_in) {
    if (row.size() != n) throw std::invalid_argument("least squares: rows of different lengths");
  }
  // Columns scaled to unit norm: the solution is the same up to that positive
  // scale (so non-negativity is unchanged), and one tolerance then suits
  // features as different as a request count and a KV-token count.
  std::vector<double> col_norm(n, 0.0);
  for (const auto& row : a_in) {
    for (std::size_t j = 0; j < n; ++j) col_norm[j] += row[j] * row[j];
  }
  for (auto& c : col_norm) c = std::sqrt(c);
  Matrix a = a_in;
  for (auto& row : a) {
    for (std::size_t j = 0; j < n; ++j) row[j] = col_norm[j] > 0 ? row[j] / col_norm[j] : 0.0;
  }
  double y_norm = 0;
  for (double v : y) y_norm += v * v;
  y_norm = std::sqrt(y_norm);
  const double tol = 10 * std::numeric_limits<double>::epsilon() * static_cast<double>(std::max(a.size(), n)) * std::max(y_norm, 1e-300);

  std::vector<bool> passive(n, false);
  std::vector<double> x(n, 0.0);
  std::vector<double> w = dual(a, y, x);
  // Each outer step adds one column; the inner loop only removes columns, so
  // 3n outer steps is far more than the method needs (it terminates in theory).
  for (std::size_t iter = 0; iter < 3 * n + 3; ++iter) {
    std::size_t t = n;
    double best = tol;
    for (std::size_t j = 0; j < n; ++j) {
      if (!passive[j] && w[j] > best) best = w[j], t = j;
    }
    if (t == n) break;  // Kuhn-Tucker conditions hold: optimal
    passive[t] = true;
    for (;;) {
      std::vector<double> s = solve_passive(a, y, passive);
      bool feasible = true;
      for (std::size_t j = 0; j < n; ++j) feasible = feasible && (!passive[j] || s[j] > 0);
      if (feasible) {
        x = std::move(s);
        break;
      }
      // Step from x towards s as far as feasibility allows, then drop the
      // columns that reached zero.
      double alpha = 1.0;
      for (std::size_t j = 0; j < n; ++j) {
        if (passive[j] && s[j] <= 0) alpha = std::min(alpha, x[j] / (x[j] - s[j]));
      }
      for (std::size_t j = 0; j < n; ++j) {
        if (!passive[j]) continue;
        x[j] += alpha * (s[j] - x[j]);
        if (x[j] <= tol) {
          x[j] = 0;
          passive[j] = false;
        }
      }
    }
    w = dual(a, y, x);
  }
  for (std::size_t j = 0; j < n; ++j) x[j] = col_norm[j] > 0 ? x[j] / col_norm[j] : 0.0;
  return x;
}

}  // namespace april::studies
