// `april plan`: which rollout design, over-provisioning, engine size and GPU
// split for this model on this cluster (studies/plan.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <sstream>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "base/run_keys.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "cli/distributed_runs.hpp"
#include "cli/output_paths.hpp"
#include "cli/progress.hpp"
#include "rl/metric_columns.hpp"
#include "rl/step_metrics.hpp"
#include "scenario/design_space.hpp"
#include "scenario/scenario.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/train_sync_knobs.hpp"
#include "studies/plan.hpp"
#include "studies/plan_search.hpp"
#include "studies/prediction_trust.hpp"
#include "studies/run_batch.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {

template <typename T>
std::vector<T> parse_list(const std::string& text, const char* option) {
  std::vector<T> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      std::size_t used = 0;
      const T v = std::is_integral_v<T> ? static_cast<T>(std::stoll(item, &used)) : static_cast<T>(std::stod(item, &used));
      if (used != item.size() || !(v >= 1)) throw std::invalid_argument("");
      out.push_back(v);
    } catch (const std::exception&) {
      throw std::invalid_argument(fmt::format("{} '{}': expected a comma list of numbers of at least 1, got '{}'", option, text, item));
    }
  }
  if (out.empty()) throw std::invalid_argument(fmt::format("{}: empty list", option));
  return out;
}

nlohmann::json result_json(const studies::PlanResult& r) {
  nlohmann::json j = {
      {"plan", r.plan.label()}, {"policy", r.plan.policy}, {"tensor_parallel", r.plan.tensor_parallel}, {"design", r.plan.design()}};
  if (r.plan.alpha) j["alpha"] = *r.plan.alpha;
  if (r.plan.tail_engines) j["tail_engines"] = *r.plan.tail_engines;
  if (!r.excluded.empty()) {
    j["excluded"] = r.excluded;
    return j;
  }
  if (!r.stopped.empty()) {
    j["stopped"] = r.stopped;
    return j;
  }
  j.update({{"seeds", r.seeds},
            {"effective_throughput_tok_s", r.throughput_tok_s},
            {"effective_throughput_ci95", r.throughput_ci95},
            {"staleness_mean", r.staleness_mean},
            {"offpolicy_token_fraction", r.offpolicy_fraction},
            {"step_time_s", r.step_s},
            {"rollout_s", r.rollout_s},
            {"train_s", r.train_s},
            {"sync_s", r.sync_s},
            {"engine_busy_fraction", r.engine_busy},
            {"trainer_busy_fraction", r.trainer_busy},
            {"trainer_lent_fraction", r.trainer_lent},
            {"reason", r.reason}});
  return j;
}

std::string duration_text(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

// Before a search that will take minutes or more, says how long, from one
// step of its first plan: a 1 M-GPU plan of 10,000 steps must not run for
// hours unannounced. On standard error, so the answer on standard output
// stays the same.
void warn_when_long(const std::vector<studies::PlanCandidate>& candidates, const studies::RunContext& context, std::int64_t workers,
                    bool exhaustive) {
  const studies::PlanCandidate* first = nullptr;
  double every_step = 0;
  for (const auto& c : candidates) {
    if (c.seeds.empty()) continue;
    if (first == nullptr) first = &c;
    every_step += static_cast<double>(c.seeds.size()) * static_cast<double>(c.seeds.front().get(base::keys::kSteps));
  }
  if (first == nullptr) return;
  base::Config probe = first->seeds.front();
  probe.set(base::keys::kSteps, std::int64_t{1}, "plan");
  const auto record = studies::simulate_run(studies::RunSpec{nlohmann::json::object(), first->plan.policy, probe}, context);
  if (record.status != "done") return;  // the search says why
  const double every_s = record.wall_time_s * every_step / static_cast<double>(std::max<std::int64_t>(1, workers));
  if (every_s < 60) return;
  // The race simulates about a third of the steps of every plan in full, as seen on the docs' workloads.
  const double race_s = every_s / 3.0;
  std::fputs(fmt::format("april plan: one step of {} takes {:.2g} s here; the search should take about {} ({}){}\n", first->plan.label(),
                         record.wall_time_s, duration_text(exhaustive ? every_s : race_s),
                         exhaustive ? "every plan in full" : fmt::format("a race; every plan in full: {}", duration_text(every_s)),
                         ", fewer --steps, --repeats or plans take less")
                 .c_str(),
             stderr);
}

// What the command line says, bound to the options that fill it.
struct PlanArgs {
  std::string scenario = "default", alpha_text = "1.5,2,3", tp_text, tail_text, json_path;
  std::vector<std::string> sets, policy_items, constraint_items;
  std::int64_t repeats = 3, jobs = 1, max_splits = 6, top = 5;
  bool exhaustive = false;
};

po::options_description plan_options(PlanArgs& a) {
  po::options_description opts(
      "usage: april plan [--scenario S] [--set key=value]... [--policy P]... [--alpha LIST] [--tp LIST]\n"
      "                  [--tail-engines LIST] [--max-splits N] [--repeats R] [--steps N] [--top K] [--jobs N]\n"
      "                  [--constraint 'METRIC<=V']... [--exhaustive] [--json FILE]\n"
      "       mpirun -n N april plan ... (or srun): rank 0 plans and prints, the other ranks simulate\n"
      "Runs every rollout design on the scenario's model, cluster and workload: each policy at each engine\n"
      "tensor parallelism (--tp), APRIL at each over-provisioning (--alpha), streamrl at its token-share split\n"
      "of the engines and at each --tail-engines count, and the policies that overlap rollout and training\n"
      "(one_step_off, async, laminar, elastic) on up to --max-splits rollout/train splits of the GPUs.\n"
      "Every plan runs the same R seeds. The search is a race: each plan first runs one seed for a fifth of the steps,\n"
      "and a plan more than 15% behind its design's best there, or past its design's 2 best, stops; the rest run that\n"
      "seed over every step, where 3% behind stops them; the rest run every seed (--exhaustive runs every plan so).\n"
      "Plans that do not fit (an engine's weights over its GPUs' memory, a\n"
      "split cutting an engine across nodes) are listed with the reason. Prints the best --top plans by\n"
      "effective throughput (trained tokens per second of wall time) with a 95% interval over the seeds,\n"
      "staleness and a one-line reason, then each design's best plan.\n"
      "A plan whose mean over its seeds breaks a --constraint is dropped, with its value. Without one, plans\n"
      "keep staleness_max<=4 (no trained token generated more than 4 policy versions back: the bound AReaL's\n"
      "asynchronous guide sets); --constraint none searches without any.\n\noptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&a.scenario), scenario_help().c_str())(
      "set", po::value(&a.sets), "override a scenario key: --set key=value (repeatable)")(
      "policy", po::value(&a.policy_items), "a design to compare (repeat, or a comma list); default: every policy but april_adaptive")(
      "alpha", po::value(&a.alpha_text), "april.alpha values to try (default 1.5,2,3)")(
      "tp", po::value(&a.tp_text), "engine tensor-parallel sizes to try (default: the scenario's)")(
      "tail-engines", po::value(&a.tail_text),
      "streamrl: long-tail engine counts to try beside its token-share rule (default: that rule alone)")(
      "max-splits", integer_option(&a.max_splits), "rollout/train splits per overlapping design (default 6)")(
      "repeats", integer_option(&a.repeats), "seeds per plan (default 3)")("steps", integer_option(), "steps per run")(
      "seed", integer_option(), "first seed")("top", integer_option(&a.top), "plans to print (default 5)")(
      "jobs", integer_option(&a.jobs), "worker threads (under MPI: per worker rank)")(
      "json", po::value(&a.json_path), "also write every plan, run or excluded, to FILE (written whole or not at all)")(
      "exhaustive", po::bool_switch(&a.exhaustive),
      "run every plan with every seed for every step, rather than the race that stops the plans clearly behind their design's best")(
      "constraint", po::value(&a.constraint_items),
      "METRIC<=V, <, >=, > on a plan's mean over its seeds, as tune's (repeatable; default staleness_max<=4; 'none': no constraint)");
  return opts;
}

void check_plan_args(const PlanArgs& a) {
  if (a.jobs < 1) throw std::invalid_argument("--jobs must be >= 1");
  if (a.repeats < 1 || a.repeats > 100) throw std::invalid_argument("--repeats must be in [1, 100]");
  if (a.max_splits < 1 || a.max_splits > 64) throw std::invalid_argument("--max-splits must be in [1, 64]");
  if (a.top < 1) throw std::invalid_argument("--top must be >= 1");
  if (!a.json_path.empty()) check_output_file(a.json_path, "--json");
}

// --constraint as given (metric names resolved), the default without one, none for `--constraint none`.
std::vector<studies::Constraint> plan_constraints(std::vector<std::string> items) {
  std::vector<studies::Constraint> constraints;
  const bool no_constraint = items.size() == 1 && items.front() == "none";
  if (items.empty()) items.push_back(studies::kDefaultPlanConstraint);
  if (no_constraint) return constraints;
  const auto known = rl::summary_json(rl::RunSummary{});
  std::map<std::string, double> metric_names;
  for (auto it = known.begin(); it != known.end(); ++it) {
    if (it->is_number() || it->is_null()) metric_names[it.key()] = 0;
  }
  for (const auto& text : items) {
    if (text == "none") throw std::invalid_argument("--constraint none stands alone: it drops every constraint");
    auto c = studies::parse_constraint(text);
    c.metric = studies::resolve_metric(c.metric, metric_names);
    constraints.push_back(std::move(c));
  }
  return constraints;
}

studies::PlanSpace plan_space(const PlanArgs& a, const po::variables_map& vm, const policies::PolicyRegistry& registry) {
  studies::PlanSpace space;
  std::vector<std::string> defaults;
  for (const auto& name : registry.names()) {
    if (name != "april_adaptive") defaults.push_back(name);
  }
  space.policies = policy_list(a.policy_items, registry, defaults);
  space.alphas = parse_list<double>(a.alpha_text, "--alpha");
  // Given, even empty, a list is parsed: `--tp ''` is an error, not the default.
  if (vm.count("tp") != 0) space.tensor_parallel = parse_list<std::int64_t>(a.tp_text, "--tp");
  if (vm.count("tail-engines") != 0) space.tail_engines = parse_list<std::int64_t>(a.tail_text, "--tail-engines");
  space.max_splits = static_cast<std::size_t>(a.max_splits);
  space.repeats = a.repeats;
  return space;
}

void write_plan_json(const PlanArgs& a, double wall_s, const studies::PlanSearch& search,
                     const std::vector<studies::Constraint>& constraints, const std::vector<studies::PlanResult>& ranked) {
  nlohmann::json out = {{"scenario", a.scenario},
                        {"seeds", a.repeats},
                        {"wall_s", wall_s},
                        {"search", a.exhaustive ? "exhaustive" : "race"},
                        {"simulations", search.simulations},
                        {"simulated_steps_fraction", search.exhaustive_steps > 0 ? search.simulated_steps / search.exhaustive_steps : 0.0},
                        {"constraints", nlohmann::json::array()},
                        {"plans", nlohmann::json::array()}};
  for (const auto& c : constraints) out["constraints"].push_back(c.text);
  for (const auto& r : ranked) out["plans"].push_back(result_json(r));
  write_output_file(a.json_path, out.dump(1) + "\n");
}

// How many plans ran in full, stopped in the race, or were excluded.
struct PlanCounts {
  std::size_t run = 0, stopped = 0, excluded = 0;
};

PlanCounts count_plans(const std::vector<studies::PlanResult>& ranked) {
  PlanCounts n;
  for (const auto& r : ranked) {
    n.run += r.ran() ? 1u : 0u;
    n.stopped += r.stopped.empty() ? 0u : 1u;
  }
  n.excluded = ranked.size() - n.run - n.stopped;
  return n;
}

// The scenario, the constraints and what the search ran.
void print_plan_header(const PlanArgs& a, bool constraint_given, const base::Config& base, const studies::PlanSearch& search,
                       const std::vector<studies::Constraint>& constraints, std::size_t plans, const PlanCounts& n) {
  const auto shape = sim::cluster_shape(base);
  const std::string hardware = sim::describe_hardware(base);
  fmt::print("april plan: {} on {} x{}{}, B = {} x n = {}, {} steps, {} seed{} per plan\n", base.get(sim::keys::kModel), hardware,
             shape.gpus, shape.nodes > 1 ? fmt::format(" ({} nodes)", shape.nodes) : "", base.get(base::keys::kRolloutBatchSize),
             base.get(base::keys::kSamplesPerPrompt), base.get(base::keys::kSteps), a.repeats, a.repeats == 1 ? "" : "s");
  std::vector<std::string> constraint_texts;
  for (const auto& c : constraints) constraint_texts.push_back(c.text);
  fmt::print("constraints: {}\n", constraints.empty()
                                      ? std::string("none")
                                      : fmt::format("{}{}", fmt::join(constraint_texts, ", "), constraint_given ? "" : " (the default)"));
  if (search.screening_steps > 0) {
    fmt::print(
        "{} plan{}: {} run in full, {} stopped early by the race, {} excluded ({} simulations, {:.0f}% of the steps of every "
        "plan in full; --exhaustive runs them all)\n",
        plans, plans == 1 ? "" : "s", n.run, n.stopped, n.excluded, search.simulations,
        search.exhaustive_steps > 0 ? 100.0 * search.simulated_steps / search.exhaustive_steps : 0.0);
  } else {
    fmt::print("{} plan{}: {} run ({} simulation{}), {} excluded\n", plans, plans == 1 ? "" : "s", n.run, search.simulations,
               search.simulations == 1 ? "" : "s", n.excluded);
  }
}

// The best --top plans, each design's best, and the excluded plans with their reasons.
void print_best_plans(const PlanArgs& a, double wall_s, const std::vector<studies::PlanResult>& ranked, const studies::PlanSpace& space,
                      const PlanCounts& n) {
  const auto& best = ranked.front();
  fmt::print("searched in {:.2f} s: {:.0f} x one simulation of the best plan ({:.3f} s)\n\n", wall_s,
             best.wall_s > 0 ? wall_s / (best.wall_s / static_cast<double>(best.seeds)) : 0.0,
             best.wall_s / static_cast<double>(best.seeds));
  fmt::print("best plans by effective throughput (trained tok/s, mean over seeds, 95% interval):\n");
  for (std::size_t k = 0; k < n.run && k < static_cast<std::size_t>(a.top); ++k) {
    const auto& r = ranked[k];
    // One seed gives no interval: say so rather than print "+/- 0".
    const auto interval = r.seeds > 1 ? fmt::format("+/- {:<8.0f}", r.throughput_ci95) : std::string("(one seed)");
    fmt::print("{:>3}. {:<36} {:>10.0f} {:<12} staleness {:.2f}\n     {}\n", k + 1, r.plan.label(), r.throughput_tok_s, interval,
               r.staleness_mean, r.reason);
  }
  for (const auto& note : studies::edge_of_grid_notes(best.plan, space)) fmt::print("note: {}\n", note);
  fmt::print("\neach design's best:\n  {:<14} {:<36} {:>10} {:>9} {:>10} {:>8}\n", "policy", "plan", "eff tok/s", "+/-", "staleness",
             "step s");
  for (const auto* r : studies::best_per_design(ranked)) {
    fmt::print("  {:<14} {:<36} {:>10.0f} {:>9} {:>10.2f} {:>8.1f}\n", r->plan.policy, r->plan.label(), r->throughput_tok_s,
               r->seeds > 1 ? fmt::format("{:.0f}", r->throughput_ci95) : std::string("-"), r->staleness_mean, r->step_s);
  }
  if (n.excluded > 0) {
    fmt::print("\nexcluded:\n");
    for (const auto& r : ranked) {
      if (!r.excluded.empty()) fmt::print("  {}: {}\n", r.plan.label(), r.excluded);
    }
  }
}

}  // namespace

int plan_command(const std::vector<std::string>& args) {
  PlanArgs a;
  const auto opts = plan_options(a);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  check_plan_args(a);
  const auto constraints = plan_constraints(a.constraint_items);

  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  DistributedRuns distributed(a.jobs);
  if (distributed.is_worker()) {
    distributed.serve(studies::RunContext{&registry, std::nullopt, "", studies::trace_hash(std::nullopt)}, schema);
    return 0;
  }
  base::Config base(schema);
  apply_cli_scenario(base, a.scenario, a.sets, opt_int(vm, "steps"), opt_int(vm, "seed"));
  const auto space = plan_space(a, vm, registry);

  const auto t0 = std::chrono::steady_clock::now();
  auto candidates = studies::enumerate_plans(base, registry, space);
  const studies::RunContext context{&registry, std::nullopt, "", studies::trace_hash(std::nullopt)};
  studies::ThreadExecutor threads(a.jobs);
  studies::RunExecutor* executor = distributed.executor() != nullptr ? distributed.executor() : &threads;
  warn_when_long(candidates, context, a.jobs * std::max<std::int64_t>(1, distributed.ranks() - 1), a.exhaustive);
  ProgressPrinter progress;
  studies::PlanSearchOptions search_options;
  search_options.exhaustive = a.exhaustive;
  search_options.constraints = constraints;
  auto search = studies::search_plans(candidates, search_options, *executor, context, [&](std::int64_t finished, std::int64_t total) {
    studies::BatchProgress p;
    p.finished = finished;
    p.total = total;
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress(p);
  });
  progress.finish();
  auto& metrics = search.metrics;
  for (std::size_t i = 0; i < candidates.size(); ++i) candidates[i].stopped = search.stopped[i];
  studies::apply_plan_constraints(candidates, metrics, constraints);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto ranked = studies::rank_plans(candidates, metrics);

  if (!a.json_path.empty()) write_plan_json(a, wall_s, search, constraints, ranked);
  const auto n = count_plans(ranked);
  print_plan_header(a, vm.count("constraint") != 0, base, search, constraints, ranked.size(), n);
  if (distributed.ranks() > 1) fmt::print("ran on {}\n", distributed.describe(studies::BatchProgress{}));
  if (n.run == 0) {
    fmt::print("\nno plan fits this cluster:\n");
    for (const auto& r : ranked) fmt::print("  {}: {}\n", r.plan.label(), r.excluded.empty() ? r.stopped : r.excluded);
    return 1;
  }
  print_best_plans(a, wall_s, ranked, space, n);
  fmt::print("\n{}\n{}\n", studies::prediction_trust_line(base, ""),
             studies::design_ranking_line(scenario::any_policy_overlaps(base, registry, space.policies)));
  return 0;
}

}  // namespace april::cli
