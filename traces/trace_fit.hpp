#pragma once
// Fits the hierarchical long-tail model (sim/workload.hpp) to a trace and
// returns it as a scenario fragment that `--scenario` accepts.
//  - median and total log-spread come from a lognormal probability plot (log
//    quantiles 5%..95% against normal quantiles, least squares), not from
//    moments, so that lengths piled up at a cap do not bend the fit;
//  - the spread splits between and within groups by the one-way ANOVA shares;
//  - correctness is not in most traces: incorrect_len_factor is set to 1, and
//    the fitted lognormal describes all answers together;
//  - a cap is recognised when 3 or more samples sit at the maximum.
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "traces/trace_stats.hpp"

namespace april::traces {

struct WorkloadFit {
  double response_median_tok = 0;
  double sigma_between = 0;
  double sigma_within = 0;
  double prompt_median_tok = 0;
  double prompt_sigma = 0;
  std::int64_t samples_per_group = 0;  // the most common group size
  std::int64_t cap_tok = 0;            // 0 when no cap is recognised
};

WorkloadFit fit_workload(const std::vector<base::GroupSpec>& groups);
// {"description": ..., "n_samples_per_prompt": n, "max_response_len": cap?, "workload": {...}}
nlohmann::json fit_scenario_json(const WorkloadFit& fit, const std::string& source);

}  // namespace april::traces
