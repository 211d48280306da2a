#include "traces/trace_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace april::traces {

namespace {

// Inverse of the standard normal CDF (Acklam's rational approximation,
// relative error below 1.2e-9), then one Newton step on erfc.
double normal_quantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
  double x = 0;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * 3.14159265358979323846) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

}  // namespace

WorkloadFit fit_workload(const std::vector<sim::GroupSpec>& groups) {
  const TraceStats s = compute_stats(groups);
  WorkloadFit f;
  // Lognormal probability plot: regress log q(p) on the normal quantile z(p)
  // for p = 5%, 10%, ..., 95%; the intercept is log-median, the slope sigma.
  // Quantiles at or above a cap are left out.
  double sz = 0, sy = 0, szz = 0, szy = 0, m = 0;
  for (int k = 1; k <= 19; ++k) {
    const double p = 0.05 * k;
    const double q = quantile(s.sorted_tok, p);
    if (q >= static_cast<double>(s.max_tok) && k > 1) break;
    const double z = normal_quantile(p);
    const double y = std::log(std::max(1.0, q));
    sz += z, sy += y, szz += z * z, szy += z * y, m += 1;
  }
  const double slope = m > 1 && szz * m - sz * sz > 0 ? (m * szy - sz * sy) / (m * szz - sz * sz) : 0.0;
  const double sigma_total = std::max(0.0, slope);
  f.response_median_tok = std::max(1.0, std::exp((sy - slope * sz) / m));
  f.sigma_between = sigma_total * std::sqrt(s.between_group_share);
  f.sigma_within = sigma_total * std::sqrt(s.within_group_share);
  if (s.between_group_share + s.within_group_share == 0) f.sigma_within = sigma_total;
  f.prompt_median_tok = std::max(1.0, s.prompt_median_tok);
  f.prompt_sigma = s.prompt_log_sigma;
  std::map<std::size_t, std::int64_t> sizes;
  for (const auto& g : groups) sizes[g.response_tok.size()]++;
  f.samples_per_group = static_cast<std::int64_t>(
      std::max_element(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first);
  const auto at_max = std::count(s.sorted_tok.begin(), s.sorted_tok.end(), static_cast<std::int32_t>(s.max_tok));
  // A smooth tail rarely repeats its maximum; a cap piles samples on it.
  if (at_max >= 3) f.cap_tok = s.max_tok;
  return f;
}

nlohmann::json fit_scenario_json(const WorkloadFit& f, const std::string& source) {
  nlohmann::json j;
  j["description"] = fmt::format("workload fitted to {} by `april trace fit`", source);
  j["n_samples_per_prompt"] = f.samples_per_group;
  if (f.cap_tok > 0) j["max_response_len"] = f.cap_tok;
  j["workload"] = {{"response_median_tok", f.response_median_tok},
                   {"sigma_between", f.sigma_between},
                   {"sigma_within", f.sigma_within},
                   {"incorrect_len_factor", 1.0},
                   {"prompt_median_tok", f.prompt_median_tok},
                   {"prompt_sigma", f.prompt_sigma}};
  return j;
}

}  // namespace april::traces
