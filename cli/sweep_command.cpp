// `april sweep`: a grid of scenario keys (and policies) x seeds, run in worker
// threads, every run stored in the SQLite results database as it finishes.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <map>
#include <set>

#include "base/run_keys.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "cli/distributed_runs.hpp"
#include "cli/progress.hpp"
#include "cli/report_table.hpp"
#include "scenario/design_space.hpp"
#include "scenario/scenario.hpp"
#include "studies/grid.hpp"
#include "studies/results_db.hpp"
#include "studies/run_batch.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {
// A grid key's value in the row of a policy that ignores that key.
constexpr const char* kNotApplicable = "n/a";
}  // namespace

namespace {

// What the sweep stored, one line per grid point (its seeds together), in
// the grid's order: the mean effective throughput and step time over the
// seeds that ran, the largest staleness; the best point marked. A long grid
// shows its first kMaxTableRows points (`april db export` has them all).
void print_sweep_table(const std::vector<studies::RunSpec>& specs, const std::vector<studies::RunOutcome>& outcomes) {
  constexpr std::size_t kMaxTableRows = 20;
  struct Point {
    std::string params;
    std::int64_t runs = 0, failed = 0;
    double tok_s = 0, step_s = 0, staleness_max = 0;
  };
  std::vector<Point> points;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < specs.size() && i < outcomes.size(); ++i) {
    auto label = specs[i].params.dump();
    const auto [it, fresh] = index.emplace(label, points.size());
    if (fresh) points.push_back({std::move(label)});
    auto& p = points[it->second];
    const auto& m = outcomes[i].metrics;
    if (outcomes[i].failed || m.empty()) {
      ++p.failed;
      continue;
    }
    const auto get = [&m](const char* key) { return m.count(key) ? m.at(key) : 0.0; };
    ++p.runs;
    p.tok_s += get("effective_throughput_tok_s");
    p.step_s += get("step_time_s");
    p.staleness_max = std::max(p.staleness_max, get("staleness_max"));
  }
  std::size_t best = points.size(), width = 6;
  for (std::size_t k = 0; k < points.size(); ++k) {
    auto& p = points[k];
    if (p.runs > 0) {
      p.tok_s /= static_cast<double>(p.runs);
      p.step_s /= static_cast<double>(p.runs);
      if (best == points.size() || p.tok_s > points[best].tok_s) best = k;
    }
    if (k < kMaxTableRows) width = std::max(width, p.params.size());
  }
  fmt::print("\n{:<{}} {:>5} {:>10} {:>9} {:>9}\n", "params", width, "runs", "eff tok/s", "step s", "stale max");
  for (std::size_t k = 0; k < points.size() && k < kMaxTableRows; ++k) {
    const auto& p = points[k];
    if (p.runs == 0) {
      fmt::print("{:<{}} {:>5} {:>10}\n", p.params, width, 0, "failed");
      continue;
    }
    fmt::print("{:<{}} {:>5} {:>10.0f} {:>9.2f} {:>9.0f}{}\n", p.params, width, p.runs, p.tok_s, p.step_s, p.staleness_max,
               k == best ? "  <- best" : "");
  }
  if (points.size() > kMaxTableRows) fmt::print("... {} more points: april db export\n", points.size() - kMaxTableRows);
  if (best < points.size() && best >= kMaxTableRows) fmt::print("best: {} ({:.0f} eff tok/s)\n", points[best].params, points[best].tok_s);
}

// What the command line says, bound to the options that fill it.
struct SweepArgs {
  std::string scenario = "default", grid_text, db_path, trace, trace_format = "ours";
  std::vector<std::string> sets;
  std::int64_t repeats = 1, jobs = 1;
};

po::options_description sweep_options(SweepArgs& a) {
  po::options_description opts(
      "usage: april sweep [--scenario S] --grid 'policy=sync,april;april.alpha=1.25,1.5,2,3;...' [--repeats R]\n"
      "                   [--jobs N] --db FILE [options]\n"
      "       mpirun -n N april sweep ... (or srun): rank 0 stores, the other ranks simulate, --jobs threads each\n"
      "Runs the cartesian product of the grid, R seeds each (seed, seed+1, ...), in N worker threads, and\n"
      "stores every run in FILE as it finishes. Re-running the same sweep skips the runs FILE holds;\n"
      "several sweeps may write one FILE at once. `policy` in the grid picks policies (default: april); `design`\n"
      "picks the use of the GPUs: colocated or R+T rollout + train GPUs (design=colocated,4+4,6+2). A combination\n"
      "that is no design (an overlapping policy on a colocated cluster) is not run, and listed as such. A grid point\n"
      "that differs from another only in keys its policy ignores (sync and april.alpha) is one run, made once;\n"
      "its row holds n/a for those keys.\n\noptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&a.scenario), scenario_help().c_str())(
      "grid", po::value(&a.grid_text)->required(), "axes KEY=V1,V2 separated by ';' (KEY: a scenario key, policy or design)")(
      "repeats", integer_option(&a.repeats), "seeds per configuration")(
      "jobs", integer_option(&a.jobs), "worker threads (under MPI: per worker rank)")("db", po::value(&a.db_path)->required(),
                                                                                      "SQLite results database (created if missing)")(
      "set", po::value(&a.sets), "fixed override key=value (repeatable)")("steps", integer_option(), "steps per run")(
      "seed", integer_option(), "first seed")("trace", po::value(&a.trace), "drive runs from a trace")(
      "trace-format", po::value(&a.trace_format), trace_format_help().c_str());
  return opts;
}

// The runs of the grid x --repeats, and what was left out or merged.
struct SweepPlan {
  std::vector<studies::RunSpec> specs;
  std::vector<std::string> not_run;
  std::map<std::string, std::set<std::string>> ignored_by;  // policy -> keys it ignores
  std::int64_t merged = 0;
};

// A grid point that differs from one already planned only in keys its
// policy ignores (another policy's knobs) is the same run: it runs once, its
// row holding "n/a" for those keys.
SweepPlan plan_sweep(const SweepArgs& a, const po::variables_map& vm, const std::vector<studies::GridAxis>& axes,
                     const policies::PolicyRegistry& registry, const base::ConfigSchema& schema, const studies::BatchOptions& bo) {
  SweepPlan plan;
  std::set<std::string> planned;
  std::set<std::string> idle_notes;
  for (const auto& combo : studies::cartesian(axes)) {
    std::string policy = "april";
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (axes[i].key == "policy") policy = combo[i];
    }
    (void)registry.get(policy);
    for (std::int64_t r = 0; r < a.repeats; ++r) {
      base::Config c(schema);
      apply_cli_scenario(c, a.scenario, a.sets, opt_int(vm, "steps"), opt_int(vm, "seed"));
      c.set(base::keys::kSeed, c.get(base::keys::kSeed) + r, "--repeats");
      nlohmann::json params = nlohmann::json::object();
      for (std::size_t i = 0; i < axes.size(); ++i) {
        if (axes[i].key != "policy" && axes[i].key != scenario::kDesignKey && registry.ignores(policy, axes[i].key)) {
          params[axes[i].key] = kNotApplicable;
          plan.ignored_by[policy].insert(axes[i].key);
          continue;
        }
        params[axes[i].key] = combo[i];
        if (axes[i].key == "policy") continue;
        if (axes[i].key == scenario::kDesignKey)
          scenario::apply_design(c, combo[i], "--grid");
        else
          c.set_from_text(axes[i].key, combo[i], "--grid");
      }
      if (!planned.insert(fmt::format("{}#{}", params.dump(), r)).second) {
        ++plan.merged;
        continue;
      }
      if (const auto why = scenario::not_a_design(c, registry, policy)) {
        if (r == 0) plan.not_run.push_back(fmt::format("{}: {}", params.dump(), *why));
        continue;
      }
      scenario::validate_scenario(c, bo.trace ? &*bo.trace : nullptr, bo.trace_name);
      print_idle_gpus_note(c, idle_notes);
      plan.specs.push_back({params, policy, std::move(c)});
    }
  }
  return plan;
}

// Refuses a grid with no design in it; says what is not run and what was merged.
void print_plan_notes(const SweepPlan& plan) {
  if (plan.specs.empty())
    throw std::invalid_argument(fmt::format("sweep: no combination of the grid is a design: {}", fmt::join(plan.not_run, "; ")));
  if (!plan.not_run.empty()) {
    fmt::print("not run, no design ({}):\n", plan.not_run.size());
    for (const auto& n : plan.not_run) fmt::print("  {}\n", n);
  }
  if (plan.merged > 0) {
    std::vector<std::string> why;
    for (const auto& [policy, keys] : plan.ignored_by) why.push_back(fmt::format("{} ignores {}", policy, fmt::join(keys, ", ")));
    fmt::print("{} grid runs are the same run as another and made once ({}; their rows hold \"{}\")\n", plan.merged, fmt::join(why, "; "),
               kNotApplicable);
  }
}

}  // namespace

int sweep_command(const std::vector<std::string>& args) {
  SweepArgs a;
  const auto opts = sweep_options(a);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  if (a.repeats < 1 || a.jobs < 1) throw std::invalid_argument("--repeats and --jobs must be >= 1");

  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  studies::BatchOptions bo;
  bo.jobs = a.jobs;
  bo.trace = load_cli_trace(a.trace, a.trace_format);
  bo.trace_name = a.trace;
  DistributedRuns distributed(a.jobs);
  if (distributed.is_worker()) {
    distributed.serve(studies::RunContext{&registry, bo.trace, bo.trace_name, studies::trace_hash(bo.trace)}, schema);
    return 0;
  }
  bo.executor = distributed.executor();
  const auto axes = studies::parse_grid(a.grid_text);
  studies::check_study_size(axes, static_cast<std::uint64_t>(a.repeats), "--grid x --repeats");
  const auto plan = plan_sweep(a, vm, axes, registry, schema, bo);
  print_plan_notes(plan);

  ProgressPrinter progress;
  studies::BatchProgress last;
  bo.on_progress = [&](const studies::BatchProgress& p) {
    last = p;
    progress(p);
  };
  studies::ResultsDb db(a.db_path);
  const std::string spec_text = fmt::format("grid={};repeats={};sets={};steps={};seed={};trace={}", a.grid_text, a.repeats,
                                            fmt::join(a.sets, ","), vm.count("steps") ? std::to_string(*opt_int(vm, "steps")) : "",
                                            vm.count("seed") ? std::to_string(*opt_int(vm, "seed")) : "", studies::trace_hash(bo.trace));
  const auto sweep = db.sweep_id("sweep", a.scenario, spec_text);
  const auto outcomes = studies::run_batch(db, sweep, registry, plan.specs, bo);
  progress.finish();
  std::int64_t skipped = 0, failed = 0;
  for (const auto& o : outcomes) {
    skipped += o.skipped ? 1 : 0;
    failed += o.failed ? 1 : 0;
  }
  fmt::print("sweep {} in {}: {} runs ({} already stored, {} run now, {} failed)\n", sweep, a.db_path, outcomes.size(), skipped,
             static_cast<std::int64_t>(outcomes.size()) - skipped, failed);
  print_sweep_table(plan.specs, outcomes);
  fmt::print("ran on {}\n", distributed.describe(last));
  return failed > 0 ? 1 : 0;
}

}  // namespace april::cli
