// `april whatif`: the cartesian product of varied scenario keys, one row per
// configuration and policy: step time, throughput, GPU-hours, speedup over sync.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "studies/grid.hpp"
#include "scenario/simulation.hpp"
#include "base/atomic_file.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "cli/output_paths.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {

struct Row {
  std::vector<std::string> config;
  std::string policy;
  double step_time_s = 0, rollout_tput = 0, effective_tput = 0, gpu_hours_per_1000 = 0, speedup = 0, offpolicy = 0;
};

}  // namespace

int whatif_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: april whatif --scenario S [--trace T] --vary KEY=V1,V2,... [--vary ...] [--policy ...] [options]\n"
      "Runs every combination of the varied keys for each policy (same seed and workload).\n"
      "GPU-hours per 1000 steps = step time x cluster.gpus x 1000 / 3600.\n\noptions");
  std::string scenario = "default", trace, trace_format = "ours", csv_out, json_out;
  std::vector<std::string> vary, policies_arg, sets;
  opts.add_options()("help,h", "show this help")("scenario", po::value(&scenario), scenario_help().c_str())(
      "trace", po::value(&trace), "trace to drive the runs (mode: --set trace.mode=replay|resample)")(
      "trace-format", po::value(&trace_format), trace_format_help().c_str())(
      "vary", po::value(&vary), "KEY=V1,V2,... (repeatable; the runs are the cartesian product)")(
      "policy", po::value(&policies_arg), "policies (repeat or comma list); default: sync,april")(
      "set", po::value(&sets), "fixed override key=value (repeatable)")("steps", po::value<std::int64_t>(), "steps per run")(
      "seed", po::value<std::int64_t>(), "seed")("csv", po::value(&csv_out), "also write the rows as CSV")(
      "json", po::value(&json_out), "also write the rows as JSON");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  if (!csv_out.empty()) check_output_file(csv_out, "--csv");
  if (!json_out.empty()) check_output_file(json_out, "--json");

  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  std::vector<studies::GridAxis> axes;
  for (const auto& v : vary) {
    axes.push_back(studies::parse_axis(v));
    for (std::size_t i = 0; i + 1 < axes.size(); ++i) {
      if (axes[i].key == axes.back().key) throw std::invalid_argument(fmt::format("--vary: key '{}' is varied twice", axes.back().key));
    }
  }
  const std::vector<std::string> policy_names = policy_list(policies_arg, registry, {"sync", "april"});

  scenario::RunOptions ro;
  ro.trace = load_cli_trace(trace, trace_format);
  ro.trace_name = trace;

  // Every configuration, validated before any run starts.
  const auto combos = studies::cartesian(axes);
  auto make_config = [&](const std::vector<std::string>& combo) {
    base::Config c(schema);
    apply_cli_scenario(c, scenario, sets, opt_int(vm, "steps"), opt_int(vm, "seed"));
    for (std::size_t i = 0; i < axes.size(); ++i) c.set_from_text(axes[i].key, combo[i], "--vary");
    scenario::validate_scenario(c, ro.trace ? &*ro.trace : nullptr, ro.trace_name);
    return c;
  };
  for (const auto& combo : combos) (void)make_config(combo);

  std::vector<Row> rows;
  for (const auto& combo : combos) {
    const base::Config c = make_config(combo);
    double sync_tput = 0;
    std::vector<Row> these;
    for (const auto& p : policy_names) {
      const auto r = scenario::simulate(c, registry, p, ro);
      const auto d = rl::derive(r.summary.totals);
      Row row;
      row.config = combo;
      row.policy = p;
      row.step_time_s = d.total_time_s / static_cast<double>(r.summary.steps);
      row.rollout_tput = d.rollout_throughput_tok_s;
      row.effective_tput = d.effective_throughput_tok_s;
      row.gpu_hours_per_1000 = row.step_time_s * static_cast<double>(c.get_int("cluster.gpus")) * 1000.0 / 3600.0;
      row.offpolicy = d.offpolicy_token_fraction;
      if (p == "sync") sync_tput = row.rollout_tput;
      these.push_back(row);
    }
    for (auto& row : these) row.speedup = sync_tput > 0 ? row.rollout_tput / sync_tput : 0.0;
    rows.insert(rows.end(), these.begin(), these.end());
  }

  // Table.
  std::string head;
  for (const auto& a : axes) head += fmt::format("{:>22} ", a.key);
  fmt::print("{}{:<8} {:>10} {:>12} {:>12} {:>12} {:>8} {:>8}\n", head, "policy", "step s", "rollout", "effective",
             "GPU-h/1000", "speedup", "off-pol");
  fmt::print("{}{:<8} {:>10} {:>12} {:>12} {:>12} {:>8} {:>8}\n", std::string(head.size(), ' '), "", "", "tok/s", "tok/s", "steps",
             "vs sync", "");
  for (const auto& r : rows) {
    std::string cells;
    for (const auto& v : r.config) cells += fmt::format("{:>22} ", v);
    fmt::print("{}{:<8} {:>10.2f} {:>12.0f} {:>12.0f} {:>12.1f} {:>8} {:>7.1f}%\n", cells, r.policy, r.step_time_s, r.rollout_tput,
               r.effective_tput, r.gpu_hours_per_1000, r.speedup > 0 ? fmt::format("{:.3f}x", r.speedup) : "-",
               100.0 * r.offpolicy);
  }

  if (!csv_out.empty()) {
    std::string csv;
    for (const auto& a : axes) csv += a.key + ",";
    csv += "policy,step_time_s,rollout_throughput_tok_s,effective_throughput_tok_s,gpu_hours_per_1000_steps,speedup_vs_sync,"
           "offpolicy_token_fraction\n";
    for (const auto& r : rows) {
      for (const auto& v : r.config) csv += v + ",";
      csv += fmt::format("{},{:.9g},{:.9g},{:.9g},{:.9g},{},{:.9g}\n", r.policy, r.step_time_s, r.rollout_tput, r.effective_tput,
                         r.gpu_hours_per_1000, r.speedup > 0 ? fmt::format("{:.9g}", r.speedup) : "", r.offpolicy);
    }
    base::write_file_atomically(csv_out, csv);
  }
  if (!json_out.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json o;
      for (std::size_t i = 0; i < axes.size(); ++i) o["config"][axes[i].key] = r.config[i];
      o["policy"] = r.policy;
      o["step_time_s"] = r.step_time_s;
      o["rollout_throughput_tok_s"] = r.rollout_tput;
      o["effective_throughput_tok_s"] = r.effective_tput;
      o["gpu_hours_per_1000_steps"] = r.gpu_hours_per_1000;
      o["speedup_vs_sync"] = r.speedup > 0 ? nlohmann::json(r.speedup) : nlohmann::json(nullptr);
      o["offpolicy_token_fraction"] = r.offpolicy;
      j.push_back(o);
    }
    base::write_file_atomically(json_out, j.dump(2) + "\n");
  }
  return 0;
}

}  // namespace april::cli
