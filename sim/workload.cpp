#include "sim/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/run_keys.hpp"
#include "sim/shared_groups.hpp"

namespace april::sim {
namespace {

std::int32_t to_tokens(double x) {
  const double capped = std::min(x, static_cast<double>(std::numeric_limits<std::int32_t>::max() / 2));
  return std::max<std::int32_t>(1, static_cast<std::int32_t>(std::llround(capped)));
}

}  // namespace

LongTailGenerator::LongTailGenerator(const LongTailParams& params, std::uint64_t seed) : p_(params), seed_(seed), rng_(seed, "workload") {}

LongTailGenerator::LongTailGenerator(const LongTailParams& params, std::uint64_t seed, std::shared_ptr<SharedGroups> shared)
    : p_(params), seed_(seed), rng_(seed, "workload"), shared_(params.drifts() ? nullptr : std::move(shared)) {}

LongTailGenerator::~LongTailGenerator() = default;

std::unique_ptr<LongTailGenerator> shared_long_tail_generator(const LongTailParams& params, std::uint64_t seed) {
  return std::make_unique<LongTailGenerator>(params, seed, params.drifts() ? nullptr : shared_groups(params, seed));
}

double LongTailGenerator::drift_factor(std::int64_t step) const {
  if (!p_.drifts()) return 1.0;
  const auto s = static_cast<double>(step);
  const auto dip_step = static_cast<double>(std::max<std::int64_t>(1, p_.drift_dip_step));
  if (s <= dip_step) return 1.0 - p_.drift_dip * s / dip_step;
  return std::max(0.05, 1.0 - p_.drift_dip + p_.drift_rise_per_step * (s - dip_step));
}

GroupSpec LongTailGenerator::next_group(std::int64_t step) {
  if (!shared_) return draw(step);
  if (taken_next_ == taken_.size()) {
    // A chunk at a time: one lock per chunk, not per group.
    constexpr std::size_t kChunkGroups = 256;
    taken_.clear();
    taken_next_ = 0;
    shared_->copy(static_cast<std::size_t>(drawn_), kChunkGroups, taken_);
    if (taken_.empty()) {
      // Past the kept groups: on alone, from where the stream's own generator stopped.
      const auto at_end = shared_->generator_at_end();
      rng_ = at_end->rng_;
      drawn_ = at_end->drawn_;
      shared_.reset();
      return draw(step);
    }
  }
  ++drawn_;
  return std::move(taken_[taken_next_++]);
}

GroupSpec LongTailGenerator::draw(std::int64_t step) {
  GroupSpec g;
  double prompt_offset = 0, pass_rate = 0;
  if (p_.dataset_prompts > 0) {
    // The prompt's own attributes, the same every epoch: from its own stream.
    const std::int64_t k = drawn_++ % p_.dataset_prompts;
    g.prompt_id = fmt::format("gen-{}", k);
    base::Rng prompt_rng(seed_, g.prompt_id);
    g.prompt_tok = to_tokens(prompt_rng.lognormal(std::log(p_.prompt_median_tok), p_.prompt_sigma));
    prompt_offset = prompt_rng.normal(0.0, p_.sigma_between);
    pass_rate = prompt_rng.uniform01();
  } else {
    g.prompt_id = fmt::format("gen-{}", drawn_++);
    g.prompt_tok = to_tokens(rng_.lognormal(std::log(p_.prompt_median_tok), p_.prompt_sigma));
    prompt_offset = rng_.normal(0.0, p_.sigma_between);
    pass_rate = rng_.uniform01();
  }
  const double group_log_median = std::log(p_.response_median_tok * drift_factor(step)) + prompt_offset;
  const double incorrect_shift = std::log(p_.incorrect_len_factor);
  const auto n = static_cast<std::size_t>(p_.samples_per_group);
  g.response_tok.reserve(n);
  g.correct.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool correct = rng_.bernoulli(pass_rate);
    const double mu = group_log_median + (correct ? 0.0 : incorrect_shift);
    g.response_tok.push_back(to_tokens(rng_.lognormal(mu, p_.sigma_within)));
    g.correct.push_back(correct ? 1 : 0);
  }
  return g;
}

std::string LongTailGenerator::describe() const {
  return fmt::format("long-tail generator: median {} tok, sigma between {} / within {}, incorrect x{}", p_.response_median_tok,
                     p_.sigma_between, p_.sigma_within, p_.incorrect_len_factor);
}

namespace {

// A lognormal sigma of 10 already spans e^(+-20); larger ones only overflow.
constexpr double kMaxSigma = 10;

}  // namespace

void declare_workload_knobs(base::ConfigSchema& s) {
  using base::KnobType;
  s.add({base::keys::kSamplesPerPrompt.name, KnobType::Int, std::int64_t{8}, "samples", "n: samples per prompt group (generator)",
         base::in_range(1, 65536)});
  s.add({keys::kWorkloadPromptMedianTok.name, KnobType::Double, 512.0, "tok", "median prompt length", base::above_and_at_most(0, 1 << 24)});
  s.add({keys::kWorkloadPromptSigma.name, KnobType::Double, 0.3, "", "lognormal sigma of prompt lengths", base::in_range(0, kMaxSigma)});
  s.add({keys::kWorkloadResponseMedianTok.name, KnobType::Double, 1800.0, "tok",
         "median response length of a correct answer to a typical prompt", base::above_and_at_most(0, 1 << 30)});
  s.add({keys::kWorkloadSigmaBetween.name, KnobType::Double, 0.6, "", "lognormal sigma of per-prompt medians (between groups)",
         base::in_range(0, kMaxSigma)});
  s.add({keys::kWorkloadSigmaWithin.name, KnobType::Double, 0.4, "", "lognormal sigma of samples around their prompt's median",
         base::in_range(0, kMaxSigma)});
  s.add({keys::kWorkloadIncorrectLenFactor.name, KnobType::Double, 3.0, "", "incorrect answers run this many times longer",
         base::in_range(1e-6, 1e6)});
  s.add({keys::kWorkloadDriftDip.name, KnobType::Double, 0.0, "", "fraction by which the median length falls until drift_dip_step",
         base::in_range(0, 0.95)});
  s.add({keys::kWorkloadDriftDipStep.name, KnobType::Int, std::int64_t{100}, "steps", "step at which the length drift turns",
         base::in_range(1, 10'000'000)});
  s.add({keys::kWorkloadDatasetPrompts.name, KnobType::Int, std::int64_t{0}, "prompts",
         "prompts in the dataset: groups cycle through them epoch after epoch, each prompt keeping its length scale and pass "
         "rate (its samples drawn afresh); 0 = every prompt new",
         base::in_range(0, std::int64_t{1} << 40)});
  s.add({keys::kWorkloadDriftRisePerStep.name, KnobType::Double, 0.0, "1/step",
         "after the dip, the median grows by this fraction of the initial median per step", base::in_range(0, 1000)});
}

LongTailParams long_tail_params(const base::Config& c) {
  LongTailParams p;
  p.samples_per_group = c.get(base::keys::kSamplesPerPrompt);
  p.prompt_median_tok = c.get(sim::keys::kWorkloadPromptMedianTok);
  p.prompt_sigma = c.get(sim::keys::kWorkloadPromptSigma);
  p.response_median_tok = c.get(sim::keys::kWorkloadResponseMedianTok);
  p.sigma_between = c.get(sim::keys::kWorkloadSigmaBetween);
  p.sigma_within = c.get(sim::keys::kWorkloadSigmaWithin);
  p.incorrect_len_factor = c.get(sim::keys::kWorkloadIncorrectLenFactor);
  p.drift_dip = c.get(sim::keys::kWorkloadDriftDip);
  p.drift_dip_step = c.get(sim::keys::kWorkloadDriftDipStep);
  p.drift_rise_per_step = c.get(sim::keys::kWorkloadDriftRisePerStep);
  p.dataset_prompts = c.get(sim::keys::kWorkloadDatasetPrompts);
  return p;
}

}  // namespace april::sim
