// `april simulate`: run policies on one scenario and compare them.
#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/atomic_file.hpp"
#include "base/chrome_trace.hpp"
#include "base/run_keys.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "cli/output_paths.hpp"
#include "cli/report_table.hpp"
#include "cli/terminal_progress.hpp"
#include "policies/elastic_policy.hpp"
#include "rl/metric_columns.hpp"
#include "rl/run_timeline.hpp"
#include "scenario/design_space.hpp"
#include "scenario/simulation.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/elastic_switch.hpp"
#include "studies/prediction_trust.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {

// What the command line says, bound to the options that fill it.
struct SimulateArgs {
  std::string scenario = "default";
  std::vector<std::string> policy_args, sets;
  std::string trace, trace_format = "ours", out_dir, timeline_path, timeline_detail = "steps";
};

po::options_description simulate_options(SimulateArgs& a) {
  po::options_description opts(
      "usage: april simulate [options]\n"
      "Simulates each policy on the scenario (same seed, same workload) and prints one row per policy.\n"
      "With no options: the built-in default scenario, policies sync, april, sorted, one_step_off and async.\n"
      "On a colocated scenario, a policy that overlaps rollout and training (one_step_off, async) runs on a split of\n"
      "the same GPUs instead (cluster.mode=disaggregated): each split of whole engines is simulated, same seed, and\n"
      "the one with the least time per step is reported (`april tune --param cluster.rollout_gpus` chooses over\n"
      "several seeds, under constraints). On a disaggregated scenario every policy runs on its split.\n"
      "On a terminal, a line on standard error shows the steps done, the time elapsed and an estimate while it runs.\n\noptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&a.scenario), scenario_help().c_str())(
      "policy", po::value(&a.policy_args), "policy to run (repeat, or a comma list); default: sync,april,sorted,one_step_off,async")(
      "set", po::value(&a.sets), "override a scenario key: --set key=value (repeatable); `april keys` lists them")(
      "trace", po::value(&a.trace), "replay prompt groups from a trace instead of the generator (mode: --set trace.mode=replay|resample)")(
      "trace-format", po::value(&a.trace_format), trace_format_help().c_str())(
      "steps", integer_option(), "training steps (overrides the scenario's `steps`)")("seed", integer_option(),
                                                                                      "seed (overrides the scenario's `seed`)")(
      "out", po::value(&a.out_dir),
      "write DIR/summary.json, DIR/<policy>/steps.csv and DIR/<policy>/timeline.csv; DIR is assembled aside and "
      "replaces any earlier DIR whole")("timeline", po::value(&a.timeline_path),
                                        "write every policy's run as a Chrome trace-event JSON FILE (open it in ui.perfetto.dev): "
                                        "rollout, abort, train and sync spans, step ends with their metrics, engine busy spans")(
      "timeline-detail", po::value(&a.timeline_detail),
      "steps (default: a few events per engine and step), changes (also each "
      "engine's running and queued requests and KV tokens at every change: about two events per request admitted or finished) "
      "or windows (changes, and each engine's prefill iterations and decode windows, with batch and KV tokens, in place of its "
      "busy spans: about two more events per request)");
  return opts;
}

// The policies to run; the default list leaves out the overlapping policies where the GPUs allow no split.
std::vector<std::string> simulated_policies(const SimulateArgs& a, const base::Config& config, const policies::PolicyRegistry& registry,
                                            const scenario::ResolvedScenario& resolved) {
  const bool colocated = !resolved.shape.disaggregated();
  std::vector<std::string> policy_names = policy_list(a.policy_args, registry, {"sync", "april", "sorted", "one_step_off", "async"});
  if (a.policy_args.empty() && colocated && scenario::split_candidates(config, resolved.inputs).empty()) {
    std::erase_if(policy_names, [&](const std::string& p) { return scenario::policy_overlaps(config, registry, p); });
  }
  return policy_names;
}

// Each policy's run; an overlapping policy on a colocated scenario runs on its fastest split.
std::vector<ReportRow> run_policies(const base::Config& config, const policies::PolicyRegistry& registry,
                                    const scenario::ResolvedScenario& resolved, const std::vector<std::string>& policy_names,
                                    scenario::RunOptions& ro) {
  const bool colocated = !resolved.shape.disaggregated();
  // Progress on a terminal: every policy's steps, each split of a search counted.
  const std::int64_t steps = config.get(base::keys::kSteps);
  const auto splits = static_cast<std::int64_t>(scenario::split_candidates(config, resolved.inputs).size());
  std::int64_t total_steps = 0;
  for (const auto& p : policy_names) total_steps += steps * (colocated && scenario::policy_overlaps(config, registry, p) ? splits : 1);
  TerminalProgress progress("simulate", "steps", total_steps);
  std::string running;
  ro.on_step = [&](std::int64_t done, std::int64_t total) { progress.run_step(done, total, running); };
  std::vector<ReportRow> rows;
  for (const auto& p : policy_names) {
    running = p;
    if (colocated && scenario::policy_overlaps(config, registry, p)) {
      auto search = scenario::fastest_split(config, registry, p, ro);
      rows.push_back({std::move(search.run), search.shape, search.trials});
    } else {
      rows.push_back({scenario::simulate(config, registry, p, ro), resolved.shape, {}});
    }
  }
  ro.on_step = nullptr;  // it points into this frame
  progress.finish();
  return rows;
}

void write_timeline(const std::string& timeline_path, const std::vector<ReportRow>& rows, const scenario::ResolvedScenario& resolved,
                    rl::TimelineDetail detail) {
  base::ChromeTrace chrome;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const std::string label =
        row.shape.disaggregated() ? fmt::format("{} {}+{}", row.run.policy, row.shape.rollout_gpus, row.shape.train_gpus) : row.run.policy;
    rl::RunTimeline run{label, row.shape.engines, &row.run.steps, &row.run.timeline};
    run.engine_windows = &row.run.windows;
    run.sync_bytes = resolved.sync.bytes;
    run.hybrid_engines = row.run.hybrid_engines;
    rl::add_run_timeline(chrome, run, 2 * static_cast<std::int64_t>(i) + 1, detail);
  }
  write_output_file(timeline_path, chrome.text());
  fmt::print("wrote {} ({} trace events; open it in ui.perfetto.dev)\n", timeline_path, chrome.events());
}

nlohmann::json policy_summary(const ReportRow& row) {
  auto entry = rl::summary_json(row.run.summary);
  entry["cluster"] = {{"mode", row.shape.disaggregated() ? "disaggregated" : "colocated"},
                      {"gpus", row.shape.gpus},
                      {"rollout_gpus", row.shape.rollout_gpus},
                      {"train_gpus", row.shape.train_gpus},
                      {"engines", row.shape.engines}};
  if (!row.split_trials.empty()) {
    entry["split_search"] = nlohmann::json::array();
    for (const auto& t : row.split_trials) {
      entry["split_search"].push_back({{"rollout_gpus", t.rollout_gpus}, {"train_gpus", t.train_gpus}, {"step_time_s", t.step_time_s}});
    }
  }
  return entry;
}

void write_policy_files(const std::filesystem::path& dir, const scenario::RunResult& r) {
  std::filesystem::create_directories(dir / r.policy);
  base::write_file_atomically((dir / r.policy / "steps.csv").string(), rl::steps_csv(r.steps));
  std::string timeline = "time_s,engine,running,queued,kv_tok\n";
  for (const auto& p : r.timeline) {
    timeline +=
        fmt::format("{}.{:09},{},{},{},{}\n", p.time_ns / 1000000000, p.time_ns % 1000000000, p.engine, p.running, p.waiting, p.kv_tok);
  }
  base::write_file_atomically((dir / r.policy / "timeline.csv").string(), timeline);
}

// DIR/summary.json and each policy's steps.csv and timeline.csv, put in place whole.
void write_out_folder(OutputFolder& out, const SimulateArgs& a, const base::Config& config, const std::vector<ReportRow>& rows) {
  const std::filesystem::path dir = out.path();
  nlohmann::json summary;
  summary["scenario"] = config.resolved();
  summary["scenario_source"] = a.scenario;
  if (!a.trace.empty()) summary["trace"] = a.trace;
  summary["policies"] = nlohmann::json::object();
  for (const auto& row : rows) {
    summary["policies"][row.run.policy] = policy_summary(row);
    write_policy_files(dir, row.run);
  }
  base::write_file_atomically((dir / "summary.json").string(), summary.dump(2) + "\n");
  out.commit();
  fmt::print("wrote {0}/summary.json, {0}/<policy>/steps.csv and {0}/<policy>/timeline.csv\n", a.out_dir);
}

}  // namespace

int simulate_command(const std::vector<std::string>& args) {
  SimulateArgs a;
  const auto opts = simulate_options(a);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;

  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  base::Config config(schema);
  apply_cli_scenario(config, a.scenario, a.sets, opt_int(vm, "steps"), opt_int(vm, "seed"));
  const auto detail = rl::parse_timeline_detail(a.timeline_detail);
  if (a.timeline_path == "-") throw std::invalid_argument("--timeline -: a timeline is written to a file, not to standard output");
  check_outputs_apart({{"--out", a.out_dir, true}, {"--timeline", a.timeline_path, false}});
  if (!a.timeline_path.empty()) check_output_file(a.timeline_path, "--timeline");
  scenario::RunOptions ro;
  ro.record_timeline = !a.out_dir.empty() || !a.timeline_path.empty();
  ro.record_windows = !a.timeline_path.empty() && detail == rl::TimelineDetail::kWindows;
  ro.trace = load_cli_trace(a.trace, a.trace_format);
  ro.trace_name = a.trace;
  const auto resolved = scenario::validate_scenario(config, ro.trace ? &*ro.trace : nullptr, a.trace);
  ro.inputs = &resolved.inputs;  // every policy's and split's run reads the model and hardware files no more

  const bool colocated = !resolved.shape.disaggregated();
  const auto policy_names = simulated_policies(a, config, registry, resolved);
  std::optional<OutputFolder> out;
  if (!a.out_dir.empty()) out.emplace(a.out_dir, "--out");

  print_scenario_header(config, resolved, a.scenario, a.trace);
  if (!colocated && std::find(policy_names.begin(), policy_names.end(), "elastic") != policy_names.end()) {
    // The trainer's GPUs as engines, and what lending them costs.
    fmt::print("elastic: {}\n\n", sim::elastic_switch(config, resolved.inputs, config.get(policies::keys::kElasticToRolloutS),
                                                      config.get(policies::keys::kElasticToTrainerS))
                                      .how);
  }
  std::fflush(stdout);
  const auto rows = run_policies(config, registry, resolved, policy_names, ro);
  print_report_table(rows);
  fmt::print("{}\n", studies::prediction_trust_line(config, resolved.inputs.model(), a.trace));
  if (policy_names.size() > 1) {
    fmt::print("{}\n", studies::design_ranking_line(scenario::any_policy_overlaps(config, registry, policy_names)));
  }

  if (!a.timeline_path.empty()) write_timeline(a.timeline_path, rows, resolved, detail);
  if (out) write_out_folder(*out, a, config, rows);
  return 0;
}

}  // namespace april::cli
