#include "traces/trace_stats.hpp"

#include "base/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

namespace april::traces {
namespace {

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

TraceStats compute_stats(const std::vector<base::GroupSpec>& groups, std::int64_t cap_tok) {
  TraceStats s;
  s.groups = static_cast<std::int64_t>(groups.size());
  std::vector<double> prompt_tok;
  double log_sum = 0;
  for (const auto& g : groups) {
    prompt_tok.push_back(g.prompt_tok);
    for (auto t : g.response_tok) {
      s.sorted_tok.push_back(t);
      log_sum += std::log(static_cast<double>(t));
    }
  }
  s.samples = static_cast<std::int64_t>(s.sorted_tok.size());
  if (s.samples == 0) throw std::invalid_argument("the trace has no samples");
  std::sort(s.sorted_tok.begin(), s.sorted_tok.end());
  const auto n = static_cast<double>(s.samples);
  s.mean_tok = std::accumulate(s.sorted_tok.begin(), s.sorted_tok.end(), 0.0) / n;
  s.median_tok = base::quantile_sorted(s.sorted_tok, 0.5);
  s.p10_tok = base::quantile_sorted(s.sorted_tok, 0.1);
  s.p90_tok = base::quantile_sorted(s.sorted_tok, 0.9);
  s.p99_tok = base::quantile_sorted(s.sorted_tok, 0.99);
  s.min_tok = s.sorted_tok.front();
  s.max_tok = s.sorted_tok.back();
  s.cap_tok = cap_tok > 0 ? cap_tok : s.max_tok;
  const auto at_cap = s.sorted_tok.end() - std::lower_bound(s.sorted_tok.begin(), s.sorted_tok.end(), s.cap_tok);
  s.truncated_fraction = static_cast<double>(at_cap) / n;

  // One-way ANOVA on log-lengths: within = pooled variance inside groups;
  // between = variance of group means less the within noise they carry.
  const double grand = log_sum / n;
  double ss_total = 0, ss_between = 0;
  double n_groups_multi = 0;
  for (const auto& g : groups) {
    double gs = 0;
    for (auto t : g.response_tok) gs += std::log(static_cast<double>(t));
    const auto gn = static_cast<double>(g.response_tok.size());
    const double gm = gs / gn;
    ss_between += gn * (gm - grand) * (gm - grand);
    for (auto t : g.response_tok) {
      const double d = std::log(static_cast<double>(t)) - grand;
      ss_total += d * d;
    }
    if (g.response_tok.size() > 1) n_groups_multi += 1;
  }
  const double ss_within = std::max(0.0, ss_total - ss_between);
  const double g_count = static_cast<double>(s.groups);
  const double var_within = n > g_count ? ss_within / (n - g_count) : 0.0;
  const double n_bar = n / g_count;
  const double ms_between = g_count > 1 ? ss_between / (g_count - 1) : 0.0;
  const double var_between = n_groups_multi > 0 ? std::max(0.0, (ms_between - var_within) / n_bar) : ms_between;
  s.sigma_within = std::sqrt(var_within);
  s.sigma_between = std::sqrt(var_between);
  const double var_sum = var_between + var_within;
  s.between_group_share = var_sum > 0 ? var_between / var_sum : 0.0;
  s.within_group_share = var_sum > 0 ? var_within / var_sum : 0.0;

  s.lognormal_mu = grand;
  s.lognormal_sigma = std::sqrt(ss_total / n);
  // KS distance against the fitted lognormal, checked on both sides of each step.
  double ks = 0;
  for (std::size_t i = 0; i < s.sorted_tok.size();) {
    std::size_t j = i;
    while (j < s.sorted_tok.size() && s.sorted_tok[j] == s.sorted_tok[i]) ++j;
    const double z = s.lognormal_sigma > 0 ? (std::log(static_cast<double>(s.sorted_tok[i])) - s.lognormal_mu) / s.lognormal_sigma : 0.0;
    const double f = normal_cdf(z);
    ks = std::max({ks, std::fabs(f - static_cast<double>(i) / n), std::fabs(f - static_cast<double>(j) / n)});
    i = j;
  }
  s.ks_distance = ks;

  std::sort(prompt_tok.begin(), prompt_tok.end());
  s.prompt_mean_tok = std::accumulate(prompt_tok.begin(), prompt_tok.end(), 0.0) / g_count;
  s.prompt_median_tok = prompt_tok[prompt_tok.size() / 2];
  if (prompt_tok.size() % 2 == 0) s.prompt_median_tok = 0.5 * (prompt_tok[prompt_tok.size() / 2 - 1] + prompt_tok[prompt_tok.size() / 2]);
  double pl = 0, pl2 = 0, pc = 0;
  for (double p : prompt_tok) {
    if (p < 1) continue;
    pl += std::log(p);
    pl2 += std::log(p) * std::log(p);
    pc += 1;
  }
  if (pc > 1) s.prompt_log_sigma = std::sqrt(std::max(0.0, pl2 / pc - (pl / pc) * (pl / pc)));
  return s;
}

nlohmann::json stats_json(const TraceStats& s) {
  nlohmann::json j;
  j["groups"] = s.groups;
  j["samples"] = s.samples;
  j["mean_tok"] = s.mean_tok;
  j["median_tok"] = s.median_tok;
  j["p10_tok"] = s.p10_tok;
  j["p90_tok"] = s.p90_tok;
  j["p99_tok"] = s.p99_tok;
  j["min_tok"] = s.min_tok;
  j["max_tok"] = s.max_tok;
  j["cap_tok"] = s.cap_tok;
  j["truncated_fraction"] = s.truncated_fraction;
  j["between_group_variance_share"] = s.between_group_share;
  j["within_group_variance_share"] = s.within_group_share;
  j["sigma_between"] = s.sigma_between;
  j["sigma_within"] = s.sigma_within;
  j["lognormal"] = {
      {"mu", s.lognormal_mu}, {"sigma", s.lognormal_sigma}, {"median_tok", std::exp(s.lognormal_mu)}, {"ks_distance", s.ks_distance}};
  j["prompt_mean_tok"] = s.prompt_mean_tok;
  j["prompt_median_tok"] = s.prompt_median_tok;
  return j;
}

std::string stats_report(const TraceStats& s, const std::string& name) {
  std::string out = fmt::format("trace {}: {} groups, {} samples\n", name, s.groups, s.samples);
  out += fmt::format("response tokens: mean {:.2f}, median {:g}, p10 {:g}, p90 {:g}, p99 {:g}, min {}, max {}\n", s.mean_tok, s.median_tok,
                     s.p10_tok, s.p90_tok, s.p99_tok, s.min_tok, s.max_tok);
  out += fmt::format("truncated at cap {}: {:.2f}% of samples\n", s.cap_tok, 100.0 * s.truncated_fraction);
  out += fmt::format("variance of log-length: {:.1f}% between groups, {:.1f}% within (sigma between {:.3f}, within {:.3f})\n",
                     100.0 * s.between_group_share, 100.0 * s.within_group_share, s.sigma_between, s.sigma_within);
  out += fmt::format("lognormal fit: median {:.1f} tok, sigma {:.3f}; KS distance {:.4f}\n", std::exp(s.lognormal_mu), s.lognormal_sigma,
                     s.ks_distance);
  out += fmt::format("prompt tokens: mean {:.1f}, median {:g}\n\n", s.prompt_mean_tok, s.prompt_median_tok);
  // Log-spaced histogram with the cumulative share: the CDF in one view.
  const double lo = std::log2(std::max<double>(1, static_cast<double>(s.min_tok)));
  const double hi = std::log2(static_cast<double>(s.max_tok) + 1);
  const int bins = 16;
  std::vector<std::int64_t> count(bins, 0);
  for (auto t : s.sorted_tok) {
    int b = hi > lo ? static_cast<int>((std::log2(static_cast<double>(t)) - lo) / (hi - lo) * bins) : 0;
    count[static_cast<std::size_t>(std::clamp(b, 0, bins - 1))]++;
  }
  const auto peak = *std::max_element(count.begin(), count.end());
  out += fmt::format("{:>15}  {:>7}  {:>6}  histogram (log bins)\n", "tokens", "samples", "CDF");
  std::int64_t cum = 0;
  for (int b = 0; b < bins; ++b) {
    const double from = std::exp2(lo + (hi - lo) * b / bins);
    const double to = std::exp2(lo + (hi - lo) * (b + 1) / bins);
    cum += count[static_cast<std::size_t>(b)];
    const int bar =
        peak > 0 ? static_cast<int>(std::lround(40.0 * static_cast<double>(count[static_cast<std::size_t>(b)]) / static_cast<double>(peak)))
                 : 0;
    out += fmt::format("{:>7.0f}-{:<7.0f}  {:>7}  {:>5.1f}%  {}\n", from, to, count[static_cast<std::size_t>(b)],
                       100.0 * static_cast<double>(cum) / static_cast<double>(s.samples), std::string(static_cast<std::size_t>(bar), '#'));
  }
  return out;
}

}  // namespace april::traces
