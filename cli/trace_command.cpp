// `april trace import|stats|fit|synth`: trace tools for capacity studies.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/run_keys.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "cli/output_paths.hpp"
#include "cli/program_exit.hpp"
#include "scenario/simulation.hpp"
#include "traces/jsonl_trace.hpp"
#include "traces/trace_fit.hpp"
#include "traces/trace_import.hpp"
#include "traces/trace_stats.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {

constexpr const char* kTraceUsage =
    "usage: april trace <import|stats|fit|synth> [options]\n"
    "  import  convert a trace (azure, csv, jsonl) to our group-per-line JSONL\n"
    "  stats   length statistics, variance split, lognormal fit and a terminal histogram\n"
    "  fit     fit the workload model; prints a scenario fragment (JSON)\n"
    "  synth   write a synthetic JSONL trace from a scenario's workload model\n"
    "`april trace <sub> --help` describes each.\n";

traces::ImportOptions import_options(const po::variables_map& vm) {
  traces::ImportOptions o;
  o.format = vm["format"].as<std::string>();
  if (vm.count("group-size")) o.group_size = *opt_int(vm, "group-size");
  if (vm.count("map")) o.mapping = traces::parse_mapping(vm["map"].as<std::string>());
  return o;
}

void add_input_options(po::options_description& opts, const char* default_format) {
  opts.add_options()("format", po::value<std::string>()->default_value(default_format),
                     "input format: ours (our JSONL), azure, csv, jsonl")("group-size", integer_option(nullptr, 8),
                                                                          "azure: samples per group, packed in file order")(
      "map", po::value<std::string>(), "csv/jsonl: prompt_id=COL,prompt_tokens=COL,response_tokens=COL");
}

int import_cmd(const std::vector<std::string>& args) {
  po::options_description opts("usage: april trace import [--format FORMAT] [options] IN OUT\noptions");
  opts.add_options()("help,h", "show this help")("in", po::value<std::string>()->required(), "input file")(
      "out", po::value<std::string>()->required(), "output JSONL (written atomically)");
  add_input_options(opts, "azure");
  po::positional_options_description pos;
  pos.add("in", 1).add("out", 1);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, &pos)) return 0;
  check_output_file(vm["out"].as<std::string>(), "OUT");
  const auto groups = traces::import_trace(vm["in"].as<std::string>(), import_options(vm));
  write_output_file(vm["out"].as<std::string>(), traces::jsonl_trace_text(groups));
  std::size_t samples = 0;
  for (const auto& g : groups) samples += g.response_tok.size();
  fmt::print("imported {} samples in {} groups to {}\n", samples, groups.size(), vm["out"].as<std::string>());
  return 0;
}

int stats_cmd(const std::vector<std::string>& args) {
  po::options_description opts("usage: april trace stats [options] FILE\noptions");
  opts.add_options()("help,h", "show this help")("file", po::value<std::string>()->required(), "trace file")(
      "json", "print JSON instead of the report")("cap", integer_option(nullptr, 0),
                                                  "count truncation at this many tokens; 0 = the trace's maximum");
  add_input_options(opts, "ours");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, &pos)) return 0;
  const auto path = vm["file"].as<std::string>();
  const auto s = traces::compute_stats(traces::load_trace(path, import_options(vm)), *opt_int(vm, "cap"));
  if (vm.count("json"))
    fmt::print("{}\n", traces::stats_json(s).dump(2));
  else
    fmt::print("{}", traces::stats_report(s, path));
  return 0;
}

int fit_cmd(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: april trace fit [options] FILE\n"
      "Prints a scenario fragment with the fitted workload model; use it as --scenario.\noptions");
  opts.add_options()("help,h", "show this help")("file", po::value<std::string>()->required(), "trace file")(
      "out", po::value<std::string>(), "write the fragment here (atomically) instead of stdout");
  add_input_options(opts, "ours");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, &pos)) return 0;
  const auto path = vm["file"].as<std::string>();
  if (vm.count("out")) check_output_file(vm["out"].as<std::string>(), "--out");
  const auto j = traces::fit_scenario_json(traces::fit_workload(traces::load_trace(path, import_options(vm))), path);
  if (vm.count("out"))
    write_output_file(vm["out"].as<std::string>(), j.dump(2) + "\n");
  else
    fmt::print("{}\n", j.dump(2));
  return 0;
}

int synth_cmd(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: april trace synth [options] OUT\n"
      "Writes groups drawn from the scenario's workload model; lengths are capped at\n"
      "max_response_len, as a real trace records them.\noptions");
  std::vector<std::string> sets;
  opts.add_options()("help,h", "show this help")("out", po::value<std::string>()->required(), "output JSONL")(
      "scenario", po::value<std::string>()->default_value("default"), (scenario_help() + ", e.g. from `trace fit`").c_str())(
      "set", po::value(&sets), "override a scenario key (repeatable)")("groups", integer_option(nullptr, 1000), "groups to write")(
      "seed", integer_option(), "seed (overrides the scenario's)");
  po::positional_options_description pos;
  pos.add("out", 1);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, &pos)) return 0;
  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  base::Config c(schema);
  apply_cli_scenario(c, vm["scenario"].as<std::string>(), sets, std::nullopt, opt_int(vm, "seed"));
  const auto n = *opt_int(vm, "groups");
  if (n < 1) throw std::invalid_argument("--groups must be >= 1");
  // The trace is built in memory and written whole (atomically): about 8 B
  // per sample in memory and as much again as text. Refused up front past 4 GB.
  const double bytes = static_cast<double>(n) * (64.0 + 16.0 * static_cast<double>(c.get(base::keys::kSamplesPerPrompt)));
  if (bytes > 4e9) {
    throw std::invalid_argument(
        fmt::format("--groups {} x n_samples_per_prompt {} would take about {:.1f} GB to build and write; "
                    "the limit is 4 GB: write several smaller traces",
                    n, c.get(base::keys::kSamplesPerPrompt), bytes / 1e9));
  }
  check_output_file(vm["out"].as<std::string>(), "OUT");
  auto gen = scenario::make_generator(c);
  const auto cap = static_cast<std::int32_t>(c.get(base::keys::kMaxResponseLen));
  std::vector<base::GroupSpec> groups;
  for (std::int64_t i = 0; i < n; ++i) {
    auto g = gen->next_group(0);
    for (auto& t : g.response_tok) t = std::min(t, cap);
    groups.push_back(std::move(g));
  }
  write_output_file(vm["out"].as<std::string>(), traces::jsonl_trace_text(groups));
  fmt::print("wrote {} groups to {}\n", n, vm["out"].as<std::string>());
  return 0;
}

}  // namespace

int trace_command(const std::vector<std::string>& args) {
  if (args.empty() || args.front() == "--help" || args.front() == "-h") {
    fmt::print("{}", kTraceUsage);
    return args.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  const std::string& sub = args.front();
  if (sub == "import") return import_cmd(rest);
  if (sub == "stats") return stats_cmd(rest);
  if (sub == "fit") return fit_cmd(rest);
  if (sub == "synth") return synth_cmd(rest);
  print_error(fmt::format("april trace: unknown subcommand '{}'\n{}", sub, kTraceUsage));
  return 2;
}

}  // namespace april::cli
