#include "studies/nelder_mead.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace april::studies {

NelderMeadResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> start,
                             const std::vector<double>& step, double tolerance, int max_evaluations) {
  const std::size_t n = start.size();
  if (n == 0 || step.size() != n) throw std::invalid_argument("nelder_mead: start and step must have the same, non-zero size");
  std::vector<std::vector<double>> p(n + 1, start);
  for (std::size_t i = 0; i < n; ++i) p[i + 1][i] += step[i];
  std::vector<double> v(n + 1);
  int evaluations = 0;
  const auto eval = [&](const std::vector<double>& x) {
    ++evaluations;
    return f(x);
  };
  for (std::size_t i = 0; i <= n; ++i) v[i] = eval(p[i]);
  std::vector<std::size_t> order(n + 1);
  while (evaluations < max_evaluations) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    const std::size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (v[worst] - v[best] <= tolerance) break;
    std::vector<double> centroid(n, 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t i = 0; i < n; ++i) centroid[i] += p[order[k]][i] / static_cast<double>(n);
    }
    const auto along = [&](double t) {
      std::vector<double> x(n);
      for (std::size_t i = 0; i < n; ++i) x[i] = centroid[i] + t * (p[worst][i] - centroid[i]);
      return x;
    };
    const auto reflected = along(-1.0);
    const double vr = eval(reflected);
    if (vr < v[best]) {
      const auto expanded = along(-2.0);
      const double ve = eval(expanded);
      if (ve < vr)
        p[worst] = expanded, v[worst] = ve;
      else
        p[worst] = reflected, v[worst] = vr;
      continue;
    }
    if (vr < v[second]) {
      p[worst] = reflected, v[worst] = vr;
      continue;
    }
    const auto contracted = vr < v[worst] ? along(-0.5) : along(0.5);
    const double vc = eval(contracted);
    if (vc < std::min(vr, v[worst])) {
      p[worst] = contracted, v[worst] = vc;
      continue;
    }
    // Shrink towards the best point.
    for (std::size_t k = 0; k <= n; ++k) {
      if (k == best) continue;
      for (std::size_t i = 0; i < n; ++i) p[k][i] = p[best][i] + 0.5 * (p[k][i] - p[best][i]);
      v[k] = eval(p[k]);
    }
  }
  const auto it = std::min_element(v.begin(), v.end());
  return {p[static_cast<std::size_t>(it - v.begin())], *it, evaluations};
}

}  // namespace april::studies
