#include "studies/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "base/run_keys.hpp"
#include "base/stats.hpp"
#include "policies/april_policy.hpp"
#include "policies/streamrl_policy.hpp"
#include "rl/metric_columns.hpp"
#include "scenario/design_space.hpp"
#include "scenario/scenario.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "sim/train_sync_knobs.hpp"
#include "sim/trainer_memory.hpp"

namespace april::studies {

std::string Plan::design() const { return colocated() ? "colocated" : fmt::format("{}+{}", rollout_gpus, train_gpus); }

std::string Plan::label() const {
  return fmt::format("{}{}{}, TP {}, {}", policy, alpha ? fmt::format(" alpha {:g}", *alpha) : "",
                     tail_engines ? fmt::format(" tail {}", *tail_engines) : "", tensor_parallel, design());
}

namespace {

// The plan's configuration for each seed, checked as `april simulate` checks
// a scenario; the first failure is the reason the plan is none.
PlanCandidate make_candidate(const base::Config& base, Plan plan, std::int64_t repeats) {
  PlanCandidate out;
  try {
    base::Config c = base;
    if (plan.alpha) c.set(policies::keys::kAprilAlpha, *plan.alpha, "plan");
    if (plan.tail_engines) c.set(policies::keys::kStreamRlTailEngines, *plan.tail_engines, "plan");
    // An MoE engine's expert parallelism divides its GPUs: where the
    // scenario's does not divide this engine size, the largest that does.
    const auto ep = c.get(sim::keys::kClusterExpertParallel);
    if (ep > 1 && plan.tensor_parallel % ep != 0) {
      c.set(sim::keys::kClusterExpertParallel, std::gcd(ep, plan.tensor_parallel), "plan");
    }
    if (plan.colocated()) {
      const auto gpus = sim::cluster_shape(base).gpus;
      scenario::apply_design(c, "colocated", "plan");
      c.set(sim::keys::kClusterTensorParallel, plan.tensor_parallel, "plan");
      const std::int64_t engines = std::max<std::int64_t>(1, gpus / plan.tensor_parallel);
      c.set(sim::keys::kClusterEngines, engines, "plan");
      if (plan.tail_engines && *plan.tail_engines >= engines) {
        throw base::ConfigError(fmt::format("streamrl.tail_engines ({}) leaves no engine of the {} at TP {} to the rest",
                                            *plan.tail_engines, engines, plan.tensor_parallel));
      }
    } else {
      c.set(sim::keys::kClusterTensorParallel, plan.tensor_parallel, "plan");
      scenario::apply_design(c, plan.design(), "plan");
    }
    const auto seed = c.get(base::keys::kSeed);
    for (std::int64_t r = 0; r < repeats; ++r) {
      base::Config s = c;
      s.set(base::keys::kSeed, seed + r, "plan");
      scenario::validate_scenario(s);
      out.seeds.push_back(std::move(s));
    }
    // The scenario's checks hold the engines; the trainer's model states, its
    // activations' lower bound and its host memory are checked here, as only
    // a plan's search moves its GPU count.
    const auto model = sim::resolve_model(c.get(sim::keys::kModel));
    const sim::ActivationInputs activations{c.get(base::keys::kMaxResponseLen), c.get(sim::keys::kTrainFusedLogits)};
    if (const auto why = sim::trainer_memory_shortfall(model, sim::trainer_setup(c), sim::trainer_accelerator(c), activations)) {
      throw base::ConfigError(*why);
    }
  } catch (const base::ConfigError& e) {
    out.seeds.clear();
    out.excluded = e.what();
  }
  out.plan = std::move(plan);
  return out;
}

double metric(const std::map<std::string, double>& m, const std::string& key) { return plan_metric(m, key); }

std::string percent(double share) { return fmt::format("{:.0f}%", 100.0 * share); }

std::string reason_for(const PlanResult& r, const PlanResult* baseline) {
  std::string out;
  if (r.plan.colocated()) {
    const double step = r.step_s > 0 ? r.step_s : 1.0;
    out = fmt::format("step {:.1f} s: rollout {}, train {}, sync {}", r.step_s, percent(r.rollout_s / step), percent(r.train_s / step),
                      percent(r.sync_s / step));
  } else {
    out = fmt::format("rollout and training overlap on {}:{}: trainer busy {}, engines busy {}, staleness {:.2f}", r.plan.rollout_gpus,
                      r.plan.train_gpus, percent(r.trainer_busy), percent(r.engine_busy), r.staleness_mean);
    if (r.trainer_lent > 0) out += fmt::format("; the trainer's GPUs lent to rollout {} of the time", percent(r.trainer_lent));
  }
  if (r.plan.alpha) {
    out += fmt::format("; alpha {:g} leaves {} of trained tokens off-policy", *r.plan.alpha, percent(r.offpolicy_fraction));
  }
  if (baseline != nullptr && baseline != &r && baseline->throughput_tok_s > 0) {
    out += fmt::format("; {:+.0f}% over the best sync, colocated at TP {}", 100.0 * (r.throughput_tok_s / baseline->throughput_tok_s - 1.0),
                       baseline->plan.tensor_parallel);
    if (r.plan.colocated() && baseline->rollout_s > 0) {
      out += fmt::format(" (rollout {:+.0f}%)", 100.0 * (r.rollout_s / baseline->rollout_s - 1.0));
    }
  }
  return out;
}

}  // namespace

std::vector<PlanCandidate> enumerate_plans(const base::Config& base, const policies::PolicyRegistry& registry, const PlanSpace& space) {
  if (space.repeats < 1) throw std::invalid_argument("plan: at least one seed per plan");
  std::vector<std::int64_t> tps = space.tensor_parallel;
  if (tps.empty()) tps.push_back(base.get(sim::keys::kClusterTensorParallel));
  std::vector<PlanCandidate> out;
  for (const auto tp : tps) {
    for (const auto& policy : space.policies) {
      (void)registry.get(policy);  // an unknown name fails here, naming the known ones
      Plan plan;
      plan.policy = policy;
      plan.tensor_parallel = tp;
      base::Config probe = base;
      probe.set(sim::keys::kClusterTensorParallel, tp, "plan");
      if (!scenario::policy_overlaps(probe, registry, policy)) {
        if (policy == "april" && !space.alphas.empty()) {
          for (const double a : space.alphas) {
            plan.alpha = a;
            out.push_back(make_candidate(base, plan, space.repeats));
          }
        } else if (policy == "streamrl") {
          out.push_back(make_candidate(base, plan, space.repeats));
          for (const auto n : space.tail_engines) {
            plan.tail_engines = n;
            out.push_back(make_candidate(base, plan, space.repeats));
          }
        } else {
          out.push_back(make_candidate(base, plan, space.repeats));
        }
        continue;
      }
      // split_candidates reads the GPU budget and the trainer's layout from a
      // colocated shape; one engine makes any budget a valid one.
      base::Config split_probe = probe;
      scenario::apply_design(split_probe, "colocated", "plan");
      split_probe.set(sim::keys::kClusterEngines, std::int64_t{1}, "plan");
      std::vector<std::int64_t> splits;
      try {
        splits = scenario::split_candidates(split_probe, space.max_splits);
      } catch (const base::ConfigError& e) {
        PlanCandidate none{plan, {}, e.what(), {}};
        out.push_back(std::move(none));
        continue;
      }
      if (splits.empty()) {
        out.push_back({plan, {}, fmt::format("no split of the GPUs into whole engines of {} and a trainer", tp), {}});
        continue;
      }
      const auto gpus = sim::cluster_shape(split_probe).gpus;
      for (const auto r : splits) {
        plan.rollout_gpus = r;
        plan.train_gpus = gpus - r;
        out.push_back(make_candidate(base, plan, space.repeats));
      }
    }
  }
  return out;
}

std::vector<PlanResult> rank_plans(const std::vector<PlanCandidate>& candidates,
                                   const std::vector<std::vector<std::map<std::string, double>>>& metrics) {
  if (metrics.size() != candidates.size()) throw std::invalid_argument("plan: one metrics list per candidate");
  std::vector<PlanResult> run, stopped, excluded;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    PlanResult r;
    r.plan = candidates[i].plan;
    r.excluded = candidates[i].excluded;
    if (r.excluded.empty() && !candidates[i].stopped.empty()) {
      r.stopped = candidates[i].stopped;
      stopped.push_back(std::move(r));
      continue;
    }
    const auto& runs = metrics[i];
    if (!r.excluded.empty() || runs.empty()) {
      if (r.excluded.empty()) r.excluded = "not run";
      excluded.push_back(std::move(r));
      continue;
    }
    const double n = static_cast<double>(runs.size());
    r.seeds = static_cast<std::int64_t>(runs.size());
    double sum_sq = 0;
    for (const auto& m : runs) {
      const double x = metric(m, "effective_throughput_tok_s");
      r.throughput_tok_s += x / n;
      sum_sq += x * x;
      r.staleness_mean += metric(m, "staleness_mean") / n;
      r.offpolicy_fraction += metric(m, "offpolicy_token_fraction") / n;
      r.step_s += metric(m, "step_time_s") / n;
      const double steps = std::max(1.0, metric(m, "steps"));
      r.rollout_s += metric(m, "rollout_time_s") / steps / n;
      r.train_s += metric(m, "train_time_s") / steps / n;
      r.sync_s += metric(m, "sync_time_s") / steps / n;
      r.engine_busy += metric(m, "engine_busy_fraction") / n;
      r.trainer_busy += metric(m, "trainer_busy_fraction") / n;
      r.trainer_lent += metric(m, "trainer_lent_fraction") / n;
      r.wall_s += metric(m, "wall_time_s");
    }
    if (runs.size() > 1) {
      const double var = std::max(0.0, (sum_sq - n * r.throughput_tok_s * r.throughput_tok_s) / (n - 1));
      r.throughput_ci95 = base::student_t_quantile(0.975, n - 1) * std::sqrt(var / n);
    }
    run.push_back(std::move(r));
  }
  std::stable_sort(run.begin(), run.end(), [](const PlanResult& a, const PlanResult& b) {
    if (a.throughput_tok_s != b.throughput_tok_s) return a.throughput_tok_s > b.throughput_tok_s;
    return a.plan.label() < b.plan.label();
  });
  // One baseline for every plan: the best synchronous colocated plan over the
  // engine sizes searched (the first in the ranking), as the docs' tables use.
  const PlanResult* baseline = nullptr;
  for (const auto& b : run) {
    if (b.plan.policy == "sync" && b.plan.colocated()) {
      baseline = &b;
      break;
    }
  }
  for (auto& r : run) r.reason = reason_for(r, baseline);
  run.insert(run.end(), std::make_move_iterator(stopped.begin()), std::make_move_iterator(stopped.end()));
  run.insert(run.end(), std::make_move_iterator(excluded.begin()), std::make_move_iterator(excluded.end()));
  return run;
}

void apply_plan_constraints(std::vector<PlanCandidate>& candidates, std::vector<std::vector<std::map<std::string, double>>>& metrics,
                            const std::vector<Constraint>& constraints) {
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!candidates[i].excluded.empty() || metrics[i].empty()) continue;
    for (const auto& c : constraints) {
      double mean = 0;
      for (const auto& m : metrics[i]) mean += metric(m, c.metric) / static_cast<double>(metrics[i].size());
      if (c.holds(mean)) continue;
      candidates[i].excluded = fmt::format("dropped by the constraint {}: {} is {:.3g} (mean over {} seed{})", c.text, c.metric, mean,
                                           metrics[i].size(), metrics[i].size() == 1 ? "" : "s");
      metrics[i].clear();
      break;
    }
  }
}

std::vector<std::string> edge_of_grid_notes(const Plan& best, const PlanSpace& space) {
  std::vector<std::string> notes;
  if (best.alpha && space.alphas.size() > 1) {
    const auto [lo, hi] = std::minmax_element(space.alphas.begin(), space.alphas.end());
    if (*best.alpha == *hi) {
      notes.push_back(fmt::format("the best alpha, {:g}, is the largest searched: try --alpha {:g},{:g} (and mind the staleness)", *hi, *hi,
                                  *hi * 1.5));
    } else if (*best.alpha == *lo && *lo > 1.0) {
      notes.push_back(fmt::format("the best alpha, {:g}, is the smallest searched: try --alpha {:g},{:g}", *lo,
                                  std::max(1.0, 1.0 + (*lo - 1.0) / 2.0), *lo));
    }
  }
  if (space.tensor_parallel.size() > 1) {
    const auto [lo, hi] = std::minmax_element(space.tensor_parallel.begin(), space.tensor_parallel.end());
    if (best.tensor_parallel == *hi) {
      notes.push_back(fmt::format("the best engine size, TP {}, is the largest searched: try --tp {},{}", *hi, *hi, *hi * 2));
    } else if (best.tensor_parallel == *lo && *lo > 1) {
      notes.push_back(fmt::format("the best engine size, TP {}, is the smallest searched: try --tp {},{}", *lo, *lo / 2, *lo));
    }
  }
  return notes;
}

double plan_metric(const std::map<std::string, double>& m, const std::string& key) {
  const auto it = m.find(key);
  if (it != m.end()) return it->second;
  // A metric of another design (trainer_lent_fraction) is absent and reads 0;
  // a name no run has would rank a plan last without a word.
  if (key == "wall_time_s") return 0.0;
  const auto& columns = rl::metric_columns();
  if (std::none_of(columns.begin(), columns.end(), [&](const rl::MetricColumn& c) { return key == c.name; })) {
    throw std::logic_error(fmt::format("plan: no run metric is called '{}'", key));
  }
  return 0.0;
}

std::vector<const PlanResult*> best_per_design(const std::vector<PlanResult>& ranked) {
  std::vector<const PlanResult*> out;
  for (const auto& r : ranked) {
    if (!r.ran()) continue;
    const bool seen = std::any_of(out.begin(), out.end(), [&](const PlanResult* b) { return b->plan.policy == r.plan.policy; });
    if (!seen) out.push_back(&r);
  }
  return out;
}

}  // namespace april::studies
