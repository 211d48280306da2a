// `april tune`: the best value of one scenario parameter for an objective
// under constraints, with every run stored in the results database.
#include <fmt/format.h>

#include <algorithm>

#include <boost/program_options.hpp>
#include <cmath>
#include <map>
#include <set>

#include "base/run_keys.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "cli/distributed_runs.hpp"
#include "cli/progress.hpp"
#include "cli/report_table.hpp"
#include "rl/metric_columns.hpp"
#include "rl/step_metrics.hpp"
#include "scenario/scenario.hpp"
#include "sim/engine_knobs.hpp"
#include "studies/grid.hpp"
#include "studies/results_db.hpp"
#include "studies/run_batch.hpp"
#include "studies/tuner.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {

std::pair<double, double> parse_range(const std::string& text) {
  const auto colon = text.find(':');
  try {
    if (colon != std::string::npos) return {std::stod(text.substr(0, colon)), std::stod(text.substr(colon + 1))};
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(fmt::format("--range '{}': expected LO:HI", text));
}

// What the command line says, bound to the options that fill it.
struct TuneArgs {
  std::string scenario = "default", param, range = "1:4", objective = "effective_throughput", db_path, policy = "april", direction = "max";
  std::vector<std::string> constraints, sets;
  std::int64_t repeats = 3, jobs = 1, rounds = 5, points = 5, step = 0;
};

po::options_description tune_options(TuneArgs& a) {
  po::options_description opts(
      "usage: april tune [--scenario S] --param KEY [--range LO:HI] [--objective METRIC] [--constraint 'METRIC<=V']...\n"
      "                  [--repeats R] [--jobs N] --db FILE [options]\n"
      "       mpirun -n N april tune ... (or srun): rank 0 searches and stores, the other ranks simulate\n"
      "Grid refinement with replicates: round 1 runs --points values evenly over the range; each later\n"
      "round halves the spacing around the best feasible value. Every value runs with the same R seeds\n"
      "(common random numbers), so comparisons between values see little seed noise; the mean decides\n"
      "and a Student-t 95% interval says how sure it is. Every run is stored in FILE.\n\noptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&a.scenario), scenario_help().c_str())(
      "param", po::value(&a.param)->required(), "the scenario key to tune, e.g. april.alpha")("range", po::value(&a.range),
                                                                                              "LO:HI (default 1:4)")(
      "objective", po::value(&a.objective),
      "summary metric to optimise (default effective_throughput: trained tokens per second, comparable across "
      "designs; rollout_throughput counts aborted tokens too)")("direction", po::value(&a.direction), "max or min (default max)")(
      "constraint", po::value(&a.constraints), "METRIC<=V, <, >=, > on the mean over seeds (repeatable)")(
      "repeats", integer_option(&a.repeats), "seeds per value (default 3)")(
      "rounds", integer_option(&a.rounds), "refinement rounds (default 5)")("points", integer_option(&a.points),
                                                                            "values in the first round (default 5)")(
      "step", integer_option(&a.step),
      "an integer key's values are LO + k x STEP (default 1; cluster.rollout_gpus and cluster.train_gpus: "
      "cluster.tensor_parallel, so that every split tried is whole engines)")("jobs", integer_option(&a.jobs),
                                                                              "worker threads (under MPI: per worker rank)")(
      "policy", po::value(&a.policy), "policy to run (default april)")("db", po::value(&a.db_path)->required(), "SQLite results database")(
      "set", po::value(&a.sets), "fixed override key=value (repeatable)")("steps", integer_option(), "steps per run")(
      "seed", integer_option(), "first seed");
  return opts;
}

// A round's runs are built before it starts: points x repeats, bounded as any study.
void check_round_size(const TuneArgs& a) {
  if (a.points > 0 && a.repeats > 0 &&
      static_cast<double>(a.points) * static_cast<double>(a.repeats) > static_cast<double>(studies::kMaxStudyRuns)) {
    throw std::invalid_argument(fmt::format("--points {} x --repeats {} makes more runs per round than the {} one study holds", a.points,
                                            a.repeats, studies::kMaxStudyRuns));
  }
}

studies::TuneSpec tune_spec(const TuneArgs& a) {
  studies::TuneSpec spec;
  std::tie(spec.lo, spec.hi) = parse_range(a.range);
  spec.points = a.points;
  spec.rounds = a.rounds;
  spec.repeats = a.repeats;
  spec.objective = a.objective;
  spec.maximize = a.direction == "max";
  for (const auto& c : a.constraints) spec.constraints.push_back(studies::parse_constraint(c));
  return spec;
}

// Whether --param is an integer key (a double one otherwise; anything else is
// refused), with a.step set to its lattice: 1, or the tensor-parallel size for
// a split of the cluster, so that every split tried is whole engines.
bool check_tuned_key(TuneArgs& a, const po::variables_map& vm, const base::ConfigSchema& schema) {
  const base::Knob* knob = schema.find(a.param);
  if (knob == nullptr) {
    base::Config probe(schema);
    probe.set_from_text(a.param, "0", "--param");  // throws, with did-you-mean
  } else if (knob->type != base::KnobType::Int && knob->type != base::KnobType::Double) {
    throw std::invalid_argument(
        fmt::format("--param {}: a {} key cannot be tuned; tune takes a numeric key", a.param, base::type_name(knob->type)));
  }
  const bool integer = knob != nullptr && knob->type == base::KnobType::Int;
  if (vm.count("step") && !integer)
    throw std::invalid_argument(fmt::format("--step: {} is not an integer key; --step applies to integer keys", a.param));
  if (vm.count("step") && a.step < 1) throw std::invalid_argument(fmt::format("--step {}: must be at least 1", a.step));
  if (integer && a.step == 0) {
    a.step = 1;
    if (a.param == "cluster.rollout_gpus" || a.param == "cluster.train_gpus") {
      base::Config c(schema);
      apply_cli_scenario(c, a.scenario, a.sets, opt_int(vm, "steps"), opt_int(vm, "seed"));
      a.step = c.get(sim::keys::kClusterTensorParallel);
    }
  }
  return integer;
}

// The objective and every constraint name a summary metric.
void check_metric_names(const studies::TuneSpec& spec, const std::string& objective) {
  const auto known_metrics = rl::summary_json(rl::RunSummary{});
  std::map<std::string, double> metric_names;
  for (auto it = known_metrics.begin(); it != known_metrics.end(); ++it) {
    if (it->is_number() || it->is_null()) metric_names[it.key()] = 0;
  }
  (void)studies::resolve_metric(objective, metric_names);
  for (const auto& c : spec.constraints) (void)studies::resolve_metric(c.metric, metric_names);
}

void check_integer_range(const TuneArgs& a, const studies::TuneSpec& spec, bool integer) {
  if (integer && (spec.lo != std::round(spec.lo) || spec.hi != std::round(spec.hi))) {
    throw std::invalid_argument(fmt::format("--range {}: {} is an integer key; give integer ends", a.range, a.param));
  }
  if (integer && std::fmod(spec.hi - spec.lo, static_cast<double>(a.step)) != 0) {
    throw std::invalid_argument(fmt::format("--range {}: {}'s values are LO + k x {} (--step); HI - LO must be a multiple of {}", a.range,
                                            a.param, a.step, a.step));
  }
}

// The scenario of one run: --param at x, the seed moved by the repeat r.
class RunMaker {
 public:
  RunMaker(const TuneArgs& a, const po::variables_map& vm, const base::ConfigSchema& schema, bool integer)
      : a_(a), vm_(vm), schema_(schema), integer_(integer) {}

  [[nodiscard]] std::string value_text(double x) const { return integer_ ? fmt::format("{}", std::llround(x)) : fmt::format("{:.6g}", x); }

  base::Config operator()(double x, std::int64_t r) {
    base::Config c(schema_);
    apply_cli_scenario(c, a_.scenario, a_.sets, opt_int(vm_, "steps"), opt_int(vm_, "seed"));
    c.set(base::keys::kSeed, c.get(base::keys::kSeed) + r, "--repeats");
    c.set_from_text(a_.param, value_text(x), "--param");
    scenario::validate_scenario(c);
    print_idle_gpus_note(c, idle_notes_);
    return c;
  }

 private:
  const TuneArgs& a_;
  const po::variables_map& vm_;
  const base::ConfigSchema& schema_;
  bool integer_;
  std::set<std::string> idle_notes_;
};

// The curve, one line per value tried, and the recommendation; 1 when no value is feasible.
int print_tune_result(const TuneArgs& a, const studies::TuneSpec& spec, const studies::TuneResult& result, std::int64_t sweep,
                      const DistributedRuns& distributed) {
  const std::string obj = studies::resolve_metric(a.objective, result.curve.front().metric_means);
  fmt::print("{} for {} ({} {}), {} seeds per value, {} runs; stored as sweep {} in {}\n\n", a.param, obj,
             a.direction == "max" ? "maximise" : "minimise", a.policy, a.repeats, result.runs, sweep, a.db_path);
  if (distributed.ranks() > 1) fmt::print("ran on {}\n\n", distributed.describe(studies::BatchProgress{}));
  // Columns as wide as their metric's full name (rollout_throughput_tok_s was cut to 14).
  std::string chead;
  for (const auto& c : spec.constraints) chead += fmt::format(" {:>{}}", c.metric, std::max<std::size_t>(22, c.metric.size()));
  const auto obj_w = std::max<std::size_t>(14, obj.size());
  fmt::print("{:>10} {:>{}} {:>12}{}  {}\n", a.param.substr(a.param.find('.') + 1), obj, obj_w, "95% CI +/-", chead, "feasible");
  for (std::size_t i = 0; i < result.curve.size(); ++i) {
    const auto& p = result.curve[i];
    std::string cells;
    for (const auto& c : spec.constraints) {
      const auto m = studies::resolve_metric(c.metric, p.metric_means);
      cells += fmt::format(" {:>{}.6g}", p.metric_means.at(m), std::max<std::size_t>(22, c.metric.size()));
    }
    fmt::print("{:>10.4g} {:>{}.6g} {:>12.4g}{}  {}{}\n", p.x, p.mean, obj_w, p.ci95, cells,
               p.feasible ? "yes" : "no (" + fmt::format("{}", fmt::join(p.violated, ", ")) + ")",
               result.best && *result.best == i ? "   <- best" : "");
  }
  if (!result.best) {
    fmt::print("\nno value satisfies the constraints\n");
    return 1;
  }
  const auto& b = result.curve[*result.best];
  fmt::print("\nrecommended {} = {:.4g}: {} = {:.6g} +/- {:.4g} (95% CI over {} seeds)\n", a.param, b.x, obj, b.mean, b.ci95, a.repeats);
  fmt::print("values within noise of the best: {} in [{:.4g}, {:.4g}]\n", a.param, result.indistinguishable_lo,
             result.indistinguishable_hi);
  if (result.binding.empty())
    fmt::print("binding constraints: none\n");
  else
    fmt::print("binding constraints: {} (the nearest better value violates it)\n", fmt::join(result.binding, ", "));
  return 0;
}

}  // namespace

int tune_command(const std::vector<std::string>& args) {
  TuneArgs a;
  const auto opts = tune_options(a);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  if (a.direction != "max" && a.direction != "min") throw std::invalid_argument("--direction must be max or min");

  const auto registry = policies::builtin_policies();
  (void)registry.get(a.policy);
  const auto schema = scenario::make_schema(registry);
  if (a.jobs < 1) throw std::invalid_argument("--jobs must be >= 1");
  DistributedRuns distributed(a.jobs);
  if (distributed.is_worker()) {
    distributed.serve(studies::RunContext{&registry, std::nullopt, "", studies::trace_hash(std::nullopt)}, schema);
    return 0;
  }
  check_round_size(a);
  auto spec = tune_spec(a);

  // Everything checked before the first run: the key and its type, every
  // value of the first round and both ends of the range (later rounds only
  // refine between them), and the metric names.
  const bool integer = check_tuned_key(a, vm, schema);
  spec.lattice = integer ? a.step : 0;
  check_metric_names(spec, a.objective);
  RunMaker make(a, vm, schema, integer);
  check_integer_range(a, spec, integer);
  (void)make(spec.lo, 0);
  (void)make(spec.hi, 0);
  for (double x : studies::first_round_values(spec)) (void)make(x, 0);

  studies::ResultsDb db(a.db_path);
  const std::string spec_text = fmt::format(
      "param={};range={};objective={};direction={};constraints={};repeats={};rounds={};points={};"
      "policy={};sets={}{}",
      a.param, a.range, a.objective, a.direction, fmt::join(a.constraints, ","), a.repeats, a.rounds, a.points, a.policy,
      fmt::join(a.sets, ","), a.step > 1 ? fmt::format(";step={}", a.step) : "");
  const auto sweep = db.sweep_id("tune", a.scenario, spec_text);
  ProgressPrinter progress;
  studies::BatchOptions bo;
  bo.jobs = a.jobs;
  bo.executor = distributed.executor();
  bo.on_progress = [&](const studies::BatchProgress& p) { progress(p); };
  const auto result = studies::tune(spec, [&](const std::vector<double>& xs) {
    std::vector<studies::RunSpec> specs;
    for (double x : xs) {
      for (std::int64_t r = 0; r < a.repeats; ++r) {
        nlohmann::json params = {{a.param, make.value_text(x)}};
        specs.push_back({params, a.policy, make(x, r)});
      }
    }
    std::vector<std::map<std::string, double>> out;
    for (const auto& o : studies::run_batch(db, sweep, registry, specs, bo)) {
      if (o.failed) throw std::runtime_error("a tuning run failed: " + o.error);
      out.push_back(o.metrics);
    }
    return out;
  });
  progress.finish();
  return print_tune_result(a, spec, result, sweep, distributed);
}

}  // namespace april::cli
