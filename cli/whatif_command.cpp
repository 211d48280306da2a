// `april whatif`: the cartesian product of varied scenario keys, one row per
// configuration and policy: step time, its speed-up over sync, throughput,
// GPU-hours, staleness; rows ranked by time per trained sample.
#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/atomic_file.hpp"
#include "base/chrome_trace.hpp"
#include "base/run_keys.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "cli/output_paths.hpp"
#include "cli/report_table.hpp"
#include "cli/terminal_progress.hpp"
#include "rl/run_timeline.hpp"
#include "scenario/design_space.hpp"
#include "scenario/simulation.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/train_sync_knobs.hpp"
#include "studies/grid.hpp"
#include "studies/prediction_trust.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {

struct Row {
  std::vector<std::string> config;
  std::string policy;
  double step_time_s = 0, rollout_tput = 0, effective_tput = 0, gpu_hours_per_1000 = 0, offpolicy = 0;
  // Seconds of wall time per trained sample: a step trains B x n samples
  // (docs/design.md section 3), so this compares rows whose B or n differ too.
  double s_per_trained_sample = 0;
  // Over sync's: its seconds per trained sample / this row's (the speed-up a
  // user gets), and rollout tok/s / sync's (the rollout phase alone). 0: no
  // sync to compare with.
  double effective_speedup = 0, rollout_vs_sync = 0;
  double staleness_mean = 0;
  std::int64_t staleness_max = 0;
  std::size_t rank = 0;  // 1: the least time per trained sample
};

// The sync row a row is compared with: sync in the same combination; when
// `design` is varied, sync on the colocated cluster of the same combination
// otherwise, the baseline every design is weighed against (where that was
// not run, sync on the row's own split).
const Row* sync_baseline(const std::vector<Row>& rows, const Row& row, std::ptrdiff_t design_axis) {
  const Row* same = nullptr;
  for (const auto& r : rows) {
    if (r.policy != "sync") continue;
    if (r.config == row.config) same = &r;
    if (design_axis < 0 || r.config[static_cast<std::size_t>(design_axis)] != "colocated") continue;
    bool others_equal = true;
    for (std::size_t i = 0; i < r.config.size() && others_equal; ++i) {
      others_equal = static_cast<std::ptrdiff_t>(i) == design_axis || r.config[i] == row.config[i];
    }
    if (others_equal) return &r;
  }
  return same;
}

std::string ratio_text(double x) { return x > 0 ? fmt::format("{:.3f}x", x) : "-"; }

// "k1=v1, k2=v2" for a combination, as the skip notes name it.
std::string describe_combo(const std::vector<studies::GridAxis>& axes, const std::vector<std::string>& combo) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < axes.size(); ++i) parts.push_back(axes[i].key + "=" + combo[i]);
  return fmt::format("{}", fmt::join(parts, ", "));
}

// What the command line says, bound to the options that fill it.
struct WhatifArgs {
  std::string scenario = "default", trace, trace_format = "ours", csv_out, json_out, timeline_path, timeline_detail = "steps";
  std::vector<std::string> vary, policies_arg, sets;
};

po::options_description whatif_options(WhatifArgs& a) {
  po::options_description opts(
      "usage: april whatif [--scenario S] [--trace T] [--vary KEY=V1,V2,...]... [--policy ...] [options]\n"
      "Runs every combination of the varied keys for each policy (same seed and workload).\n"
      "KEY `design` varies the use of the GPUs in one axis: colocated, or R+T rollout + train GPUs (e.g.\n"
      "--vary design=colocated,4+4,6+2). A combination that is no design (an overlapping policy on a colocated\n"
      "cluster, a split on a colocated one) is not run, and listed as such.\n"
      "speed-up vs sync = sync's seconds per trained sample / the row's (a step trains B x n samples; same B and n:\n"
      "sync's s/step / the row's), against sync in the same combination (with `design` varied: on the colocated\n"
      "cluster);\n"
      "rank orders the rows by seconds per trained sample, 1 the fastest, marked *, within each combination of the\n"
      "varied workload keys (workload.*, trace.*, max_response_len: rows with other work do not compare).\n"
      "rollout vs sync = rollout tok/s\n"
      "over sync's (the rollout phase alone, not the run's speed). GPU-hours per 1000 steps = step time x\n"
      "cluster.gpus x 1000 / 3600. Under the table, how far to trust it: one trust line, or one per kind of run\n"
      "when the varied keys change it (model, framework, accelerator, workload), labelled by those keys' values;\n"
      "then, when the rows compare policies or designs, a ranking line: how often published design pairs were\n"
      "ranked right and which way the speed-ups err.\n"
      "On a terminal, a line on standard error shows the progress while it runs.\n\noptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&a.scenario), scenario_help().c_str())(
      "trace", po::value(&a.trace), "trace to drive the runs (mode: --set trace.mode=replay|resample)")(
      "trace-format", po::value(&a.trace_format), trace_format_help().c_str())(
      "vary", po::value(&a.vary), "KEY=V1,V2,... (repeatable; the runs are the cartesian product; KEY: a scenario key or design)")(
      "policy", po::value(&a.policies_arg), "policies (repeat or comma list); default: sync,april")(
      "set", po::value(&a.sets), "fixed override key=value (repeatable)")("steps", integer_option(), "steps per run")(
      "seed", integer_option(), "seed")("csv", po::value(&a.csv_out),
                                        "also write the rows as CSV (- for standard output, the table then on standard error)")(
      "json", po::value(&a.json_out), "also write the rows as JSON (- for standard output)")(
      "timeline", po::value(&a.timeline_path),
      "write every row's run into one Chrome trace-event JSON FILE (ui.perfetto.dev), "
      "each row's tracks named by its combination and policy")(
      "timeline-detail", po::value(&a.timeline_detail),
      "steps (default), changes (also each engine's running and queued requests and KV tokens at every change) or windows "
      "(changes, and each engine's prefill iterations and decode windows in place of its busy spans)");
  return opts;
}

void check_whatif_outputs(const WhatifArgs& a) {
  if (a.csv_out == "-" && a.json_out == "-") throw std::invalid_argument("--csv - and --json -: only one output can be standard output");
  if (!a.csv_out.empty()) check_output_file(a.csv_out, "--csv");
  if (!a.json_out.empty()) check_output_file(a.json_out, "--json");
  if (a.timeline_path == "-") throw std::invalid_argument("--timeline -: a timeline is written to a file, not to standard output");
  if (!a.timeline_path.empty()) check_output_file(a.timeline_path, "--timeline");
  check_distinct_outputs({{"--csv", a.csv_out}, {"--json", a.json_out}, {"--timeline", a.timeline_path}});
}

std::vector<studies::GridAxis> parse_axes(const std::vector<std::string>& vary) {
  std::vector<studies::GridAxis> axes;
  for (const auto& v : vary) {
    axes.push_back(studies::parse_axis(v));
    for (std::size_t i = 0; i + 1 < axes.size(); ++i) {
      if (axes[i].key == axes.back().key) throw std::invalid_argument(fmt::format("--vary: key '{}' is varied twice", axes.back().key));
    }
  }
  return axes;
}

// The scenario, the fixed overrides and one combination of the varied keys.
class ConfigMaker {
 public:
  ConfigMaker(const WhatifArgs& a, const po::variables_map& vm, const std::vector<studies::GridAxis>& axes,
              const base::ConfigSchema& schema, const scenario::RunOptions& ro)
      : a_(a), vm_(vm), axes_(axes), schema_(schema), ro_(ro) {}

  base::Config operator()(const std::vector<std::string>& combo) const {
    base::Config c(schema_);
    apply_cli_scenario(c, a_.scenario, a_.sets, opt_int(vm_, "steps"), opt_int(vm_, "seed"));
    for (std::size_t i = 0; i < axes_.size(); ++i) {
      if (axes_[i].key == scenario::kDesignKey)
        scenario::apply_design(c, combo[i], "--vary");
      else
        c.set_from_text(axes_[i].key, combo[i], "--vary");
    }
    scenario::validate_scenario(c, ro_.trace ? &*ro_.trace : nullptr, ro_.trace_name);
    return c;
  }

 private:
  const WhatifArgs& a_;
  const po::variables_map& vm_;
  const std::vector<studies::GridAxis>& axes_;
  const base::ConfigSchema& schema_;
  const scenario::RunOptions& ro_;
};

struct Planned {
  const std::vector<std::string>* combo;
  base::Config config;
  std::vector<std::string> policies;  // those for which it is a design
};

struct WhatifPlan {
  std::vector<Planned> planned;
  std::vector<std::string> not_run;
};

// Every configuration, validated before any run starts. A combination that
// is no design for a policy is left out, and said so; if nothing is left,
// there is nothing to compare.
WhatifPlan plan_whatif(const std::vector<std::vector<std::string>>& combos, const std::vector<studies::GridAxis>& axes,
                       const ConfigMaker& make_config, const policies::PolicyRegistry& registry,
                       const std::vector<std::string>& policy_names) {
  WhatifPlan plan;
  std::size_t runnable = 0;
  std::set<std::string> idle_notes;
  for (const auto& combo : combos) {
    Planned pl{&combo, make_config(combo), {}};
    print_idle_gpus_note(pl.config, idle_notes);
    for (const auto& p : policy_names) {
      if (const auto why = scenario::not_a_design(pl.config, registry, p)) {
        plan.not_run.push_back(fmt::format("{} x {}: {}", describe_combo(axes, combo), p, *why));
      } else {
        pl.policies.push_back(p);
      }
    }
    runnable += pl.policies.size();
    plan.planned.push_back(std::move(pl));
  }
  if (runnable == 0) throw std::invalid_argument(fmt::format("whatif: no combination is a design: {}", fmt::join(plan.not_run, "; ")));
  return plan;
}

Row row_of_run(const base::Config& c, const std::vector<std::string>& combo, const std::string& policy, const scenario::RunResult& r) {
  const auto d = rl::derive(r.summary.totals);
  Row row;
  row.config = combo;
  row.policy = policy;
  row.step_time_s = d.total_time_s / static_cast<double>(r.summary.steps);
  row.rollout_tput = d.rollout_throughput_tok_s;
  row.effective_tput = d.effective_throughput_tok_s;
  row.gpu_hours_per_1000 = row.step_time_s * static_cast<double>(r.steps.empty() ? 0 : r.steps.front().gpus) * 1000.0 / 3600.0;
  row.offpolicy = d.offpolicy_token_fraction;
  row.staleness_mean = d.staleness_mean;
  row.staleness_max = r.summary.totals.staleness_max;
  const double samples = static_cast<double>(c.get(base::keys::kRolloutBatchSize) * c.get(base::keys::kSamplesPerPrompt));
  row.s_per_trained_sample = row.step_time_s / samples;
  return row;
}

// One row per planned run, in the grid's order; each run's tracks go into
// `chrome` when there is one.
std::vector<Row> run_rows(const WhatifPlan& plan, const std::vector<studies::GridAxis>& axes, const policies::PolicyRegistry& registry,
                          scenario::RunOptions& ro, TerminalProgress& progress, base::ChromeTrace* chrome, rl::TimelineDetail detail) {
  std::vector<Row> rows;
  std::string running;
  ro.on_step = [&](std::int64_t done, std::int64_t total) { progress.run_step(done, total, running); };
  for (const auto& pl : plan.planned) {
    const base::Config& c = pl.config;
    const auto& combo = *pl.combo;
    for (const auto& p : pl.policies) {
      running = fmt::format("{} x {}", describe_combo(axes, combo), p);
      const auto r = scenario::simulate(c, registry, p, ro);
      if (chrome != nullptr) {
        const std::int64_t engines = r.steps.empty() ? 0 : r.steps.front().engines;
        const auto pid = 2 * static_cast<std::int64_t>(rows.size()) + 1;
        rl::RunTimeline run{fmt::format("{} {}", describe_combo(axes, combo), p), engines, &r.steps, &r.timeline};
        run.engine_windows = &r.windows;
        run.sync_bytes = sim::weight_sync(c).bytes;
        run.hybrid_engines = r.hybrid_engines;
        rl::add_run_timeline(*chrome, run, pid, detail);
      }
      rows.push_back(row_of_run(c, combo, p, r));
    }
  }
  ro.on_step = nullptr;  // it points into this frame
  return rows;
}

void compare_with_sync(std::vector<Row>& rows, const std::vector<studies::GridAxis>& axes) {
  std::ptrdiff_t design_axis = -1;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].key == scenario::kDesignKey) design_axis = static_cast<std::ptrdiff_t>(i);
  }
  for (auto& row : rows) {
    if (const Row* sync = sync_baseline(rows, row, design_axis)) {
      row.effective_speedup = sync->s_per_trained_sample / row.s_per_trained_sample;
      row.rollout_vs_sync = sync->rollout_tput > 0 ? row.rollout_tput / sync->rollout_tput : 0.0;
    }
  }
}

// The varied keys that change the work itself: rows that differ in them do not compare.
std::vector<std::size_t> workload_axes_of(const std::vector<studies::GridAxis>& axes) {
  std::vector<std::size_t> workload_axes;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto& k = axes[i].key;
    if (k.rfind("workload.", 0) == 0 || k.rfind("trace.", 0) == 0 || k == "max_response_len") workload_axes.push_back(i);
  }
  return workload_axes;
}

// Ranks within each combination of the varied workload keys: a row with
// shorter answers is faster for its work, not for its design. Ties keep
// the grid's order: the same inputs rank the same way.
void rank_rows(std::vector<Row>& rows, const std::vector<std::size_t>& workload_axes) {
  const auto workload_of = [&](const Row& r) {
    std::vector<std::string> w;
    for (const auto i : workload_axes) w.push_back(r.config[i]);
    return w;
  };
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rows[a].s_per_trained_sample < rows[b].s_per_trained_sample; });
  std::map<std::vector<std::string>, std::size_t> ranked;
  for (const auto i : order) rows[i].rank = ++ranked[workload_of(rows[i])];
}

void print_rows(std::FILE* table, const std::vector<studies::GridAxis>& axes, const std::vector<std::string>& policy_names,
                const std::vector<Row>& rows) {
  std::vector<std::size_t> key_w;
  std::size_t policy_w = 6;
  for (const auto& a : axes) {
    key_w.push_back(a.key.size());
    for (const auto& v : a.values) key_w.back() = std::max(key_w.back(), v.size());
  }
  for (const auto& p : policy_names) policy_w = std::max(policy_w, p.size());
  std::string head, blank;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    head += fmt::format("{:>{}} ", axes[i].key, key_w[i]);
    blank += fmt::format("{:>{}} ", "", key_w[i]);
  }
  const auto line = [&](const std::string& config_cells, const auto&... cells) {
    fmt::print(table, "{}{:<{}} {:>8} {:>8} {:>10} {:>10} {:>8} {:>9} {:>7} {:>6} {:>6} {:>5}\n", config_cells, cells...);
  };
  line(head, "policy", policy_w, "step s", "speed-up", "effective", "rollout", "rollout", "GPU-h", "off-", "stale", "stale", "rank");
  line(blank, "", policy_w, "", "vs sync", "tok/s", "tok/s", "vs sync", "/1k step", "policy", "mean", "max", "");
  for (const auto& r : rows) {
    std::string cells;
    for (std::size_t i = 0; i < r.config.size(); ++i) cells += fmt::format("{:>{}} ", r.config[i], key_w[i]);
    line(cells, r.policy, policy_w, fmt::format("{:.2f}", r.step_time_s), ratio_text(r.effective_speedup),
         fmt::format("{:.0f}", r.effective_tput), fmt::format("{:.0f}", r.rollout_tput), ratio_text(r.rollout_vs_sync),
         fmt::format("{:.1f}", r.gpu_hours_per_1000), fmt::format("{:.1f}%", 100.0 * r.offpolicy), fmt::format("{:.2f}", r.staleness_mean),
         r.staleness_max, r.rank == 1 ? std::string("1 *") : std::to_string(r.rank));
  }
}

// How far to trust each row: a varied model, framework, accelerator or workload
// can change the kind of run and so the measured error to quote. One line when
// every combination is of one kind; otherwise one per kind, labelled by the
// varied keys whose values tell the kinds apart.
void print_trust_lines(std::FILE* table, const std::vector<studies::GridAxis>& axes, const WhatifPlan& plan, const std::string& trace) {
  std::vector<std::string> lines;                          // distinct, in the grid's order
  std::vector<std::vector<std::set<std::string>>> values;  // per line, per axis: the values of its combinations
  for (const auto& pl : plan.planned) {
    const auto line = studies::prediction_trust_line(pl.config, trace);
    auto at = static_cast<std::size_t>(std::find(lines.begin(), lines.end(), line) - lines.begin());
    if (at == lines.size()) {
      lines.push_back(line);
      values.emplace_back(axes.size());
    }
    for (std::size_t i = 0; i < axes.size(); ++i) values[at][i].insert((*pl.combo)[i]);
  }
  if (lines.size() == 1) {
    fmt::print(table, "{}\n", lines.front());
    return;
  }
  for (std::size_t k = 0; k < lines.size(); ++k) {
    std::vector<std::string> label;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      // An axis labels the kinds when its values are not the same set in every kind.
      const bool tells = std::any_of(values.begin(), values.end(), [&](const auto& v) { return v[i] != values[k][i]; });
      if (tells) label.push_back(fmt::format("{}={}", axes[i].key, fmt::join(values[k][i], ",")));
    }
    // "trust: ..." becomes "trust (hardware=h20): ...".
    fmt::print(table, "trust ({}){}\n", fmt::join(label, " "), lines[k].substr(std::string("trust").size()));
  }
}

// What was not run, what the ranks compare and how far to trust the prediction.
void print_table_notes(std::FILE* table, const std::vector<studies::GridAxis>& axes, const WhatifPlan& plan,
                       const std::vector<std::size_t>& workload_axes, const std::string& trace, const policies::PolicyRegistry& registry) {
  if (!plan.not_run.empty()) {
    fmt::print(table, "\nnot run, no design ({}):\n", plan.not_run.size());
    for (const auto& n : plan.not_run) fmt::print(table, "  {}\n", n);
  }
  if (!workload_axes.empty()) {
    std::vector<std::string> keys;
    for (const auto i : workload_axes) keys.push_back(axes[i].key);
    fmt::print(table, "rank: within each value of {} (rows with other work do not compare)\n", fmt::join(keys, " x "));
  }
  print_trust_lines(table, axes, plan, trace);
  // Rows of more than one policy, or of varied designs, rank designs.
  std::set<std::string> policies;
  bool overlapped = false;
  for (const auto& pl : plan.planned) {
    policies.insert(pl.policies.begin(), pl.policies.end());
    overlapped = overlapped || scenario::any_policy_overlaps(pl.config, registry, pl.policies);
  }
  const bool designs = std::any_of(axes.begin(), axes.end(), [](const studies::GridAxis& g) {
    return g.key == scenario::kDesignKey || g.key == sim::keys::kClusterMode.name || g.key == sim::keys::kClusterRolloutGpus.name;
  });
  if (policies.size() > 1 || designs) fmt::print(table, "{}\n", studies::design_ranking_line(overlapped));
}

void write_rows_csv(const std::string& path, const std::vector<studies::GridAxis>& axes, const std::vector<Row>& rows) {
  std::string csv;
  for (const auto& a : axes) csv += a.key + ",";
  csv +=
      "policy,step_time_s,seconds_per_trained_sample,effective_speedup_vs_sync,rollout_throughput_tok_s,"
      "rollout_throughput_vs_sync,effective_throughput_tok_s,gpu_hours_per_1000_steps,offpolicy_token_fraction,staleness_mean,"
      "staleness_max,rank\n";
  const auto optional = [](double x) { return x > 0 ? fmt::format("{:.9g}", x) : std::string(); };
  for (const auto& r : rows) {
    for (const auto& v : r.config) csv += v + ",";
    csv += fmt::format("{},{:.9g},{:.9g},{},{:.9g},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{}\n", r.policy, r.step_time_s, r.s_per_trained_sample,
                       optional(r.effective_speedup), r.rollout_tput, optional(r.rollout_vs_sync), r.effective_tput, r.gpu_hours_per_1000,
                       r.offpolicy, r.staleness_mean, r.staleness_max, r.rank);
  }
  write_output_file(path, csv);
}

void write_rows_json(const std::string& path, const std::vector<studies::GridAxis>& axes, const std::vector<Row>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json o;
    for (std::size_t i = 0; i < axes.size(); ++i) o["config"][axes[i].key] = r.config[i];
    o["policy"] = r.policy;
    o["step_time_s"] = r.step_time_s;
    o["seconds_per_trained_sample"] = r.s_per_trained_sample;
    o["effective_speedup_vs_sync"] = r.effective_speedup > 0 ? nlohmann::json(r.effective_speedup) : nlohmann::json(nullptr);
    o["rollout_throughput_tok_s"] = r.rollout_tput;
    o["rollout_throughput_vs_sync"] = r.rollout_vs_sync > 0 ? nlohmann::json(r.rollout_vs_sync) : nlohmann::json(nullptr);
    o["effective_throughput_tok_s"] = r.effective_tput;
    o["gpu_hours_per_1000_steps"] = r.gpu_hours_per_1000;
    o["offpolicy_token_fraction"] = r.offpolicy;
    o["staleness_mean"] = r.staleness_mean;
    o["staleness_max"] = r.staleness_max;
    o["rank"] = r.rank;
    j.push_back(o);
  }
  write_output_file(path, j.dump(2) + "\n");
}

}  // namespace

int whatif_command(const std::vector<std::string>& args) {
  WhatifArgs a;
  const auto opts = whatif_options(a);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  check_whatif_outputs(a);
  const auto detail = rl::parse_timeline_detail(a.timeline_detail);

  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  const auto axes = parse_axes(a.vary);
  const std::vector<std::string> policy_names = policy_list(a.policies_arg, registry, {"sync", "april"});

  scenario::RunOptions ro;
  ro.trace = load_cli_trace(a.trace, a.trace_format);
  ro.trace_name = a.trace;
  ro.record_timeline = !a.timeline_path.empty();
  ro.record_windows = detail == rl::TimelineDetail::kWindows;
  base::ChromeTrace chrome;

  studies::check_study_size(axes, policy_names.size(), "--vary x --policy");
  const auto combos = studies::cartesian(axes);
  const auto plan = plan_whatif(combos, axes, ConfigMaker(a, vm, axes, schema, ro), registry, policy_names);

  std::int64_t total_steps = 0;
  for (const auto& pl : plan.planned) total_steps += pl.config.get(base::keys::kSteps) * static_cast<std::int64_t>(pl.policies.size());
  TerminalProgress progress("whatif", "steps", total_steps);
  auto rows = run_rows(plan, axes, registry, ro, progress, a.timeline_path.empty() ? nullptr : &chrome, detail);
  compare_with_sync(rows, axes);
  const auto workload_axes = workload_axes_of(axes);
  rank_rows(rows, workload_axes);
  progress.finish();

  // With --csv - or --json -, standard output carries that file alone, for a
  // pipe; the table goes to standard error.
  std::FILE* const table = a.csv_out == "-" || a.json_out == "-" ? stderr : stdout;
  print_rows(table, axes, policy_names, rows);
  print_table_notes(table, axes, plan, workload_axes, a.trace, registry);
  if (!a.csv_out.empty()) write_rows_csv(a.csv_out, axes, rows);
  if (!a.json_out.empty()) write_rows_json(a.json_out, axes, rows);
  if (!a.timeline_path.empty()) {
    write_output_file(a.timeline_path, chrome.text());
    fmt::print(table, "wrote {} ({} trace events; open it in ui.perfetto.dev)\n", a.timeline_path, chrome.events());
  }
  return 0;
}

}  // namespace april::cli
