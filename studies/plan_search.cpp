#include "studies/plan_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "base/run_keys.hpp"
#include "rl/step_metrics.hpp"
#include "sim/engine_knobs.hpp"

namespace april::studies {
namespace {

constexpr const char* kThroughput = "effective_throughput_tok_s";

double value(const std::map<std::string, double>& m, const std::string& key) { return plan_metric(m, key); }

std::map<std::string, double> mean_of(const std::vector<std::map<std::string, double>>& runs) {
  std::map<std::string, double> out;
  for (const auto& m : runs) {
    for (const auto& [k, v] : m) out[k] += v / static_cast<double>(runs.size());
  }
  return out;
}

// A short run's effective throughput over the full run's `steps`: its
// first half (where an overlapping design fills its pipeline) as it ran,
// then its second half's steps repeated. Its own throughput would weigh
// that filling by a fifth, not a twentieth, and rank splits wrongly.
double projected_throughput(const std::vector<rl::StepMetrics>& ran, std::int64_t steps) {
  if (ran.empty()) return 0;
  const std::size_t half = ran.size() / 2;
  double tok = 0, time_s = 0, later_tok = 0, later_s = 0;
  for (std::size_t k = 0; k < ran.size(); ++k) {
    (k < half ? tok : later_tok) += static_cast<double>(ran[k].tokens_trained);
    (k < half ? time_s : later_s) += ran[k].step_time_s;
  }
  const double repeats = static_cast<double>(steps - static_cast<std::int64_t>(half)) / static_cast<double>(ran.size() - half);
  const double total_s = time_s + repeats * later_s;
  return total_s > 0 ? (tok + repeats * later_tok) / total_s : 0.0;
}

// One run of the search: a candidate, its seed, its steps.
using RunKey = std::tuple<std::size_t, std::size_t, std::int64_t>;

}  // namespace

std::vector<std::string> screen_plans(const std::vector<PlanCandidate>& candidates, const std::vector<std::size_t>& alive,
                                      const std::vector<std::map<std::string, double>>& screened,
                                      const std::vector<Constraint>& constraints, const std::string& what_ran, double margin,
                                      std::size_t keep) {
  if (screened.size() != alive.size()) throw std::invalid_argument("screen_plans: one screening per plan");
  std::vector<std::string> out(alive.size());
  std::map<std::string, std::vector<std::size_t>> by_design;
  for (std::size_t k = 0; k < alive.size(); ++k) {
    for (const auto& c : constraints) {
      const double v = value(screened[k], c.metric);
      if (c.holds(v)) continue;
      out[k] = fmt::format("dropped by the constraint {}: {} is {:.3g} on {} (the race drops a plan there)", c.text, c.metric, v, what_ran);
      break;
    }
    if (out[k].empty()) by_design[candidates[alive[k]].plan.policy].push_back(k);
  }
  for (auto& [design, ks] : by_design) {
    std::stable_sort(ks.begin(), ks.end(), [&](std::size_t a, std::size_t b) {
      const double ta = value(screened[a], kThroughput), tb = value(screened[b], kThroughput);
      if (ta != tb) return ta > tb;
      return candidates[alive[a]].plan.label() < candidates[alive[b]].plan.label();
    });
    const double lead = value(screened[ks.front()], kThroughput);
    for (std::size_t r = 1; r < ks.size(); ++r) {
      const double t = value(screened[ks[r]], kThroughput);
      if (t >= (1.0 - margin) * lead && (r < keep || t >= (1.0 - kScreenTie) * lead)) continue;
      out[ks[r]] = fmt::format("stopped after {}: {:.0f} tok/s, {:.0f}% behind {} ({:.0f})", what_ran, t,
                               lead > 0 ? 100.0 * (1.0 - t / lead) : 0.0, candidates[alive[ks.front()]].plan.label(), lead);
    }
  }
  return out;
}

PlanSearch search_plans(std::vector<PlanCandidate>& candidates, const PlanSearchOptions& options, RunExecutor& executor,
                        const RunContext& context, const PlanSearchProgress& progress) {
  PlanSearch out;
  const std::size_t n = candidates.size();
  out.metrics.resize(n);
  out.stopped.resize(n);
  std::int64_t steps = 0;
  for (const auto& c : candidates) {
    if (c.seeds.empty()) continue;
    steps = c.seeds.front().get(base::keys::kSteps);
    out.exhaustive_steps += static_cast<double>(c.seeds.size() * static_cast<std::size_t>(steps));
  }
  std::map<RunKey, std::map<std::string, double>> done;
  // The staleness bound the constraints set, as the largest staleness_max
  // that keeps it (-1: none): staleness_max is a whole number of versions.
  std::int64_t stop_above = -1;
  for (const auto& c : options.constraints) {
    if (c.metric != "staleness_max" || (c.op != "<=" && c.op != "<")) continue;
    const auto bound = static_cast<std::int64_t>(c.op == "<=" ? std::floor(c.limit) : std::ceil(c.limit) - 1);
    if (bound >= 0 && (stop_above < 0 || bound < stop_above)) stop_above = bound;
  }
  std::set<RunKey> screening_keys;       // runs made by a screening rung
  std::map<RunKey, std::string> failed;  // the runs of one call of run() that failed, in key order
  std::int64_t finished = 0, total = 0;
  // What a run should cost, to start the longest first (a rung waits for
  // its last run: two workers left with one long run idle one): the wall
  // time of the plan's longest run so far, scaled by steps; before any, its
  // engine count (the simulator's events grow with it).
  std::map<std::size_t, std::pair<double, std::int64_t>> seen_s;  // candidate -> (wall s, steps) of its longest run
  const auto cost = [&](const RunKey& key) {
    const auto [i, s, len] = key;
    if (const auto it = seen_s.find(i); it != seen_s.end()) {
      return it->second.first * static_cast<double>(len) / static_cast<double>(std::max<std::int64_t>(1, it->second.second));
    }
    // Unknown yet: ordered among themselves by engines, after nothing known.
    return 1e-9 * static_cast<double>(candidates[i].seeds[s].get(sim::keys::kClusterEngines) * len);
  };
  const auto run = [&](std::vector<RunKey> wanted) {
    std::stable_sort(wanted.begin(), wanted.end(), [&](const RunKey& a, const RunKey& b) { return cost(a) > cost(b); });
    std::vector<RunSpec> specs;
    std::vector<RunKey> owner;
    for (const auto& key : wanted) {
      const auto [i, s, len] = key;
      if (done.count(key) != 0 || !candidates[i].excluded.empty()) continue;
      base::Config cfg = candidates[i].seeds[s];
      if (len != steps) cfg.set(base::keys::kSteps, len, "plan");
      // A screening run (one seed) ends at the first step past the staleness
      // bound: that plan is dropped, and the rest of its run would tell nothing.
      // A run that does not end so is the run without the key, step for step.
      if (screening_keys.count(key) != 0 && stop_above >= 0) cfg.set(base::keys::kStopStalenessAbove, stop_above, "plan");
      RunSpec spec{nlohmann::json{{"plan", candidates[i].plan.label()}}, candidates[i].plan.policy, std::move(cfg)};
      // A screening run short of the full steps is kept, and a longer
      // screening run of the same seed goes on from it, where the executor
      // keeps runs: the same steps. (A run that is not screening has no
      // staleness stop, so it is not the kept run's continuation.)
      if (screening_keys.count(key) != 0) {
        spec.resume = fmt::format("{}/{}", i, s);
        if (len < steps) spec.pause_as = spec.resume;
      }
      specs.push_back(std::move(spec));
      owner.push_back(key);
    }
    if (specs.empty()) return;
    total += static_cast<std::int64_t>(specs.size());
    std::vector<const RunSpec*> todo;
    for (const auto& s : specs) todo.push_back(&s);
    executor.execute(todo, context, [&](std::size_t k, RunRecord&& record) {
      const auto i = std::get<0>(owner[k]);
      // A run that went on from a kept one simulated only its new steps, and
      // is not another simulation.
      out.simulated_steps += static_cast<double>(record.steps.size()) - static_cast<double>(record.steps_before);
      if (record.steps_before == 0) ++out.simulations;
      if (record.status != "done") {
        failed.emplace(owner[k], record.error);
      } else {
        auto& m = done[owner[k]];
        for (auto it = record.summary.begin(); it != record.summary.end(); ++it) {
          if (it->is_number()) m[it.key()] = it->get<double>();
        }
        m["wall_time_s"] = record.wall_time_s;
        auto& longest = seen_s[i];
        if (record.wall_time_s > longest.first) longest = {record.wall_time_s, std::get<2>(owner[k])};
        if (std::get<2>(owner[k]) != steps) m[kThroughput] = projected_throughput(record.steps, steps);
      }
      ++finished;
      if (progress) progress(finished, total);
    });
    // A run the simulator refuses (a check no scenario validation makes
    // before it builds the engines) excludes its plan, in its words: those of
    // its first run that failed, whatever order they ended in.
    for (const auto& [key, error] : failed) {
      auto& excluded = candidates[std::get<0>(key)].excluded;
      if (excluded.empty()) excluded = error;
    }
    failed.clear();
  };

  // The rungs: screening runs of one seed, then every seed in full.
  struct Rung {
    std::int64_t steps;
    std::size_t seeds;  // 0: every seed of the plan
    double margin;
    std::size_t keep;
    std::string what;
  };
  std::vector<Rung> rungs;
  const std::int64_t first_steps = std::max<std::int64_t>(2, (steps + 4) / 5);
  std::size_t most_seeds = 0;
  for (const auto& c : candidates) most_seeds = std::max(most_seeds, c.seeds.size());
  if (!options.exhaustive) {
    if (first_steps < steps) {
      rungs.push_back({first_steps, 1, kScreenMargin, kFirstScreenKeep, fmt::format("1 seed of {} steps", first_steps)});
      out.screening_steps = first_steps;
    }
    if (most_seeds > 1) {
      rungs.push_back({steps, 1, kFullSeedMargin, kScreenKeep, fmt::format("1 seed of all {} steps", steps)});
      if (out.screening_steps == 0) out.screening_steps = steps;
    }
  }
  const auto keys_of = [&](std::size_t i, const Rung& r) {
    std::vector<RunKey> keys;
    const std::size_t seeds = r.seeds == 0 ? candidates[i].seeds.size() : std::min(r.seeds, candidates[i].seeds.size());
    for (std::size_t s = 0; s < seeds; ++s) keys.emplace_back(i, s, r.steps);
    return keys;
  };
  const auto mean_at = [&](std::size_t i, const Rung& r) {
    std::vector<std::map<std::string, double>> runs;
    for (const auto& key : keys_of(i, r)) runs.push_back(done.at(key));
    return mean_of(runs);
  };
  const Rung full{steps, 0, 0, 0, ""};
  const auto holds = [&](const std::map<std::string, double>& m) {
    return std::all_of(options.constraints.begin(), options.constraints.end(),
                       [&](const Constraint& c) { return c.holds(value(m, c.metric)); });
  };

  // Each plan's way through the rungs: it runs rung `from`, and on from
  // there while it is kept. Returns the plans that reached the full runs.
  std::vector<std::size_t> stop_rung(n, 0);
  std::vector<bool> by_margin(n, false);  // stopped for being behind: may run after all
  const auto race = [&](std::vector<std::size_t> alive, std::size_t from, bool margins) {
    for (std::size_t r = from; r < rungs.size() && !alive.empty(); ++r) {
      std::vector<RunKey> wanted;
      for (const auto i : alive) {
        const auto keys = keys_of(i, rungs[r]);
        wanted.insert(wanted.end(), keys.begin(), keys.end());
      }
      for (const auto& key : wanted) {
        if (done.count(key) == 0) screening_keys.insert(key);
      }
      run(wanted);
      std::vector<std::size_t> kept;
      std::vector<std::map<std::string, double>> screened;
      for (const auto i : alive) {
        if (!candidates[i].excluded.empty()) continue;
        kept.push_back(i);
        screened.push_back(mean_at(i, rungs[r]));
      }
      auto verdicts = screen_plans(candidates, kept, screened, options.constraints, rungs[r].what, rungs[r].margin,
                                   margins ? rungs[r].keep : kept.size());
      alive.clear();
      for (std::size_t k = 0; k < kept.size(); ++k) {
        const auto i = kept[k];
        // screen_plans opens a margin's verdict "stopped after", a constraint's "dropped by".
        const bool behind = verdicts[k].rfind("stopped after ", 0) == 0;
        if (verdicts[k].empty() || (!margins && behind)) {
          alive.push_back(i);
          continue;
        }
        stop_rung[i] = r;
        by_margin[i] = behind;
        // A run its bound ended early says at which step.
        const auto ran_steps = static_cast<std::int64_t>(value(screened[k], "steps"));
        if (!behind && ran_steps > 0 && ran_steps < rungs[r].steps) {
          const auto at = verdicts[k].find(rungs[r].what);
          if (at != std::string::npos) {
            verdicts[k].replace(at, rungs[r].what.size(), fmt::format("1 seed by step {} of {}", ran_steps, rungs[r].steps));
          }
        }
        // Behind: stopped, and may run on. Past a constraint: excluded, as the full search would.
        (behind ? out.stopped[i] : candidates[i].excluded) = verdicts[k];
      }
    }
    std::vector<RunKey> wanted;
    for (const auto i : alive) {
      const auto keys = keys_of(i, full);
      wanted.insert(wanted.end(), keys.begin(), keys.end());
    }
    run(wanted);
    return alive;
  };

  std::vector<std::size_t> runnable;
  for (std::size_t i = 0; i < n; ++i) {
    if (candidates[i].excluded.empty() && !candidates[i].seeds.empty()) runnable.push_back(i);
  }
  std::set<std::size_t> finalists;
  for (const auto i : race(runnable, 0, true)) finalists.insert(i);
  // Per design, the plans stopped behind a finalist that did not stand (a
  // constraint dropped it in full, or it failed) run on, from the rung that
  // stopped them: those that were ahead there of the best finalist standing,
  // or, with none standing, the best ones stopped last.
  for (;;) {
    std::map<std::string, std::size_t> standing;  // design -> its best finalist standing
    for (const auto i : finalists) {
      if (!candidates[i].excluded.empty() || !holds(mean_at(i, full))) continue;
      const auto& design = candidates[i].plan.policy;
      const auto it = standing.find(design);
      if (it == standing.end() || value(mean_at(i, full), kThroughput) > value(mean_at(it->second, full), kThroughput))
        standing[design] = i;
    }
    std::map<std::size_t, std::vector<std::size_t>> revived;  // by the rung they stopped at
    std::map<std::string, std::vector<std::size_t>> behind;
    for (std::size_t i = 0; i < n; ++i) {
      if (by_margin[i]) behind[candidates[i].plan.policy].push_back(i);
    }
    for (auto& [design, plans] : behind) {
      const auto it = standing.find(design);
      if (it != standing.end()) {
        for (const auto i : plans) {
          const auto& r = rungs[stop_rung[i]];
          if (value(mean_at(i, r), kThroughput) > value(mean_at(it->second, r), kThroughput)) revived[stop_rung[i]].push_back(i);
        }
        continue;
      }
      std::stable_sort(plans.begin(), plans.end(), [&](std::size_t a, std::size_t b) {
        if (stop_rung[a] != stop_rung[b]) return stop_rung[a] > stop_rung[b];
        return value(mean_at(a, rungs[stop_rung[a]]), kThroughput) > value(mean_at(b, rungs[stop_rung[b]]), kThroughput);
      });
      for (std::size_t k = 0; k < plans.size() && k < kScreenKeep; ++k) revived[stop_rung[plans[k]]].push_back(plans[k]);
    }
    if (revived.empty()) break;
    for (const auto& [r, plans] : revived) {
      std::vector<std::size_t> next;
      for (const auto i : plans) {
        by_margin[i] = false;
        out.stopped[i].clear();
        next.push_back(i);
      }
      // From the rung after the one that stopped them, by constraints alone.
      for (const auto i : race(next, r + 1, false)) finalists.insert(i);
    }
  }
  executor.drop_paused();
  for (const auto i : finalists) {
    if (!candidates[i].excluded.empty()) continue;
    for (const auto& key : keys_of(i, full)) out.metrics[i].push_back(done.at(key));
  }
  return out;
}

}  // namespace april::studies
