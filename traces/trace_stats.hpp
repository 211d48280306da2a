#pragma once
// The shape of a trace's response lengths: quantiles, truncation at a cap,
// how the variance of log-lengths splits between and within groups, and a
// lognormal fit with its Kolmogorov-Smirnov distance.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/workload_source.hpp"

namespace april::traces {

struct TraceStats {
  std::int64_t groups = 0, samples = 0;
  double mean_tok = 0, median_tok = 0, p10_tok = 0, p90_tok = 0, p99_tok = 0;
  std::int64_t min_tok = 0, max_tok = 0;
  std::int64_t cap_tok = 0;        // the cap truncation is counted at
  double truncated_fraction = 0;   // samples with length >= cap
  double between_group_share = 0;  // of the variance of log-length (one-way ANOVA estimate)
  double within_group_share = 0;
  double sigma_between = 0, sigma_within = 0;    // the ANOVA components, in log space
  double lognormal_mu = 0, lognormal_sigma = 0;  // maximum-likelihood fit
  double ks_distance = 0;
  double prompt_mean_tok = 0, prompt_median_tok = 0, prompt_log_sigma = 0;
  std::vector<std::int32_t> sorted_tok;  // every sample's length, ascending
};

// cap_tok <= 0: the trace's own maximum.
TraceStats compute_stats(const std::vector<base::GroupSpec>& groups, std::int64_t cap_tok = 0);
nlohmann::json stats_json(const TraceStats& s);
// A text report with a log-binned histogram and CDF for the terminal.
std::string stats_report(const TraceStats& s, const std::string& name);

}  // namespace april::traces
