#include "traces/trace_fit.hpp"

#include "base/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace april::traces {

WorkloadFit fit_workload(const std::vector<base::GroupSpec>& groups) {
  const TraceStats s = compute_stats(groups);
  WorkloadFit f;
  // Lognormal probability plot: regress log q(p) on the normal quantile z(p)
  // for p = 5%, 10%, ..., 95%; the intercept is log-median, the slope sigma.
  // Quantiles at or above a cap are left out.
  double sz = 0, sy = 0, szz = 0, szy = 0, m = 0;
  for (int k = 1; k <= 19; ++k) {
    const double p = 0.05 * k;
    const double q = base::quantile_sorted(s.sorted_tok, p);
    if (q >= static_cast<double>(s.max_tok) && k > 1) break;
    const double z = base::normal_quantile(p);
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
