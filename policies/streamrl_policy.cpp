#include "policies/streamrl_policy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "base/run_keys.hpp"

namespace april::policies {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

// A uniform in (0, 1) from the top 53 bits: never 0, so its log is finite.
double unit_open(std::uint64_t bits) { return (static_cast<double>(bits >> 11U) + 0.5) / 9007199254740992.0; }

}  // namespace

StreamRlPolicy::StreamRlPolicy(std::unique_ptr<Policy> base, StreamRlParams p)
    : PolicyDecorator(std::move(base)), p_(p), history_(p.history_per_prompt) {
  if (!(p_.tail_fraction > 0.0 && p_.tail_fraction < 1.0)) throw std::invalid_argument("streamrl.tail_fraction must be in (0, 1)");
  if (p_.noise_sigma < 0.0) throw std::invalid_argument("streamrl.noise_sigma must be >= 0");
}

double StreamRlPolicy::noise_factor(std::uint64_t seed, GroupId group, std::int32_t sample, double sigma) {
  // Box-Muller on two uniforms hashed from (seed, group, sample): no state,
  // so the draw does not depend on the order samples are dispatched in.
  const std::uint64_t h =
      splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(group) * 0x100000001b3ULL + static_cast<std::uint32_t>(sample)));
  const double u1 = unit_open(h), u2 = unit_open(splitmix64(h));
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return std::exp(sigma * z);
}

void StreamRlPolicy::learn(const RolloutView& view, GroupId group) {
  if (p_.predictor == StreamRlPredictor::History) history_.learn(view, group);
}

Decisions StreamRlPolicy::on_group_accepted(const RolloutView& view, GroupId group) {
  learn(view, group);
  return PolicyDecorator::on_group_accepted(view, group);
}

Decisions StreamRlPolicy::on_group_rejected(const RolloutView& view, GroupId group) {
  learn(view, group);
  return PolicyDecorator::on_group_rejected(view, group);
}

std::vector<std::int64_t> StreamRlPolicy::predict(const RolloutView& view, const std::vector<Submission>& subs) const {
  if (p_.predictor == StreamRlPredictor::History) return history_.predict_totals(view, subs);
  std::vector<std::int64_t> total;
  total.reserve(subs.size());
  for (const Submission& s : subs) {
    const std::int32_t length = view.workload_response_tok(s.group, s.sample);
    if (length < 0) {
      throw std::invalid_argument(
          "streamrl.predictor=perfect and noisy read the workload's lengths, which only the simulator follows; use "
          "streamrl.predictor=history on a live backend");
    }
    const double factor = p_.predictor == StreamRlPredictor::Noisy ? noise_factor(p_.seed, s.group, s.sample, p_.noise_sigma) : 1.0;
    const std::int64_t t = std::max<std::int64_t>(1, std::llround(static_cast<double>(length) * factor));
    // A sample still running has outlived any prediction at or below what it holds.
    total.push_back(std::max<std::int64_t>(t, std::int64_t{s.generated_tok} + 1));
  }
  return total;
}

SubmissionPlan StreamRlPolicy::plan_submissions(const RolloutView& view, const std::vector<Submission>& subs) {
  if (p_.predictor == StreamRlPredictor::None || subs.empty()) return PolicyDecorator::plan_submissions(view, subs);
  const std::vector<std::int64_t> total = predict(view, subs);
  // With part of a dispatch unpredicted (history, before anything finished)
  // there is no ranking to dispatch by: the base's plan.
  if (std::any_of(total.begin(), total.end(), [](std::int64_t t) { return t <= 0; })) return PolicyDecorator::plan_submissions(view, subs);

  SubmissionPlan plan;
  plan.order.reserve(subs.size());
  for (std::size_t i = 0; i < subs.size(); ++i) plan.order.push_back(i);
  // Longest predicted first; equal predictions keep the base's order.
  std::stable_sort(plan.order.begin(), plan.order.end(), [&](std::size_t a, std::size_t b) { return total[a] > total[b]; });

  const std::int64_t engines = view.engines();
  std::vector<char> in_tail(subs.size(), 0);
  if (subs.size() * 2 >= largest_dispatch_) {
    // This dispatch sets the tail: its longest k% by rank (ties by the base's
    // order), and the bar later dispatches must pass: longer than its
    // longest sample outside the tail.
    largest_dispatch_ = std::max(largest_dispatch_, subs.size());
    const std::size_t tail =
        std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(p_.tail_fraction * static_cast<double>(subs.size()))), 1, subs.size());
    for (std::size_t r = 0; r < tail; ++r) in_tail[plan.order[r]] = 1;
    threshold_tok_ = tail < subs.size() ? total[plan.order[tail]] : total[plan.order[tail - 1]];
    if (engines >= 2) {
      if (p_.tail_engines > 0) {
        tail_engines_now_ = std::min(p_.tail_engines, engines - 1);
      } else {
        double tail_tok = 0, all_tok = 0;
        for (std::size_t i = 0; i < subs.size(); ++i) {
          const auto remaining = static_cast<double>(total[i] - subs[i].generated_tok);
          all_tok += remaining;
          if (in_tail[i] != 0) tail_tok += remaining;
        }
        const auto share = static_cast<std::int64_t>(std::llround(static_cast<double>(engines) * tail_tok / all_tok));
        tail_engines_now_ = std::clamp<std::int64_t>(share, 1, engines - 1);
      }
    }
  } else {
    for (std::size_t i = 0; i < subs.size(); ++i) in_tail[i] = total[i] > threshold_tok_ ? 1 : 0;
  }

  plan.predicted_remaining_tok.reserve(subs.size());
  for (std::size_t i = 0; i < subs.size(); ++i) plan.predicted_remaining_tok.push_back(total[i] - subs[i].generated_tok);
  if (tail_engines_now_ > 0) {
    const EngineRange tail{0, static_cast<std::int32_t>(tail_engines_now_)};
    const EngineRange regular{static_cast<std::int32_t>(tail_engines_now_), static_cast<std::int32_t>(engines - tail_engines_now_)};
    plan.engines.reserve(subs.size());
    for (std::size_t i = 0; i < subs.size(); ++i) plan.engines.push_back(in_tail[i] != 0 ? tail : regular);
  }
  return plan;
}

PolicyEntry streamrl_policy_entry() {
  using base::Knob;
  using base::KnobType;
  std::vector<Knob> knobs = {
      {keys::kStreamRlBase.name, KnobType::String, std::string("sync"), "",
       "the policy whose submissions this dispatches (it decides what to submit, when the batch is complete, what to train); its "
       "own keys apply. one_step_off and async need a disaggregated cluster",
       base::one_of({"sync", "april", "one_step_off", "async"})},
      {keys::kStreamRlPredictor.name, KnobType::String, std::string("noisy"), "",
       "each sample's predicted length: perfect (the workload's own: an oracle, simulator only), noisy (that times exp(sigma Z): a "
       "ranker of stated accuracy, simulator only), history (learned from each prompt's earlier lengths and finished siblings; "
       "runs live) or none (the base alone)",
       base::one_of({"perfect", "noisy", "history", "none"})},
      {keys::kStreamRlNoiseSigma.name, KnobType::Double, 0.2, "",
       "noisy: the predictor's log-normal error, sigma (0: perfect). 0.2 recalls 87% of the longest 20% on the default "
       "workload, as StreamRL's ranker (its Table 4); docs/policies.md gives the recall of other sigmas",
       base::in_range(0.0, 10.0)},
      {keys::kStreamRlTailFraction.name, KnobType::Double, 0.2, "",
       "the share of a dispatch, longest predicted first, sent to the long-tail engines (StreamRL: k = 20%)", base::in_range(0.001, 0.999)},
      {keys::kStreamRlTailEngines.name, KnobType::Int, std::int64_t{0}, "engines",
       "engines dedicated to the long tail (at most all but one); 0: the tail's share of the predicted tokens times the engines",
       base::in_range(0, 1 << 24)},
  };
  return {"streamrl",
          "StreamRL's skewness-aware dispatch (arXiv 2504.15930): the predicted long tail on dedicated engines, LPT in each pool",
          std::move(knobs),
          [](const base::Config& c) -> std::unique_ptr<Policy> {
            std::unique_ptr<Policy> inner = make_base_policy(c.get(keys::kStreamRlBase), c);
            StreamRlParams p;
            const std::string predictor = c.get(keys::kStreamRlPredictor);
            p.predictor = predictor == "perfect"   ? StreamRlPredictor::Perfect
                          : predictor == "noisy"   ? StreamRlPredictor::Noisy
                          : predictor == "history" ? StreamRlPredictor::History
                                                   : StreamRlPredictor::None;
            p.noise_sigma = c.get(keys::kStreamRlNoiseSigma);
            p.seed = static_cast<std::uint64_t>(c.get(base::keys::kSeed));
            p.tail_fraction = c.get(keys::kStreamRlTailFraction);
            p.tail_engines = c.get(keys::kStreamRlTailEngines);
            return std::make_unique<StreamRlPolicy>(std::move(inner), p);
          },
          {"sync", "april", "one_step_off", "async"}};
}

}  // namespace april::policies
