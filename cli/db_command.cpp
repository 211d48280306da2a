// `april db`: read the results database.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "base/atomic_file.hpp"
#include "base/integer_text.hpp"
#include "cli/commands.hpp"
#include "cli/output_paths.hpp"
#include "cli/program_exit.hpp"
#include "studies/results_db.hpp"

namespace april::cli {
namespace {

constexpr const char* kDbUsage =
    "usage: april db <command> FILE [...]\n"
    "  list FILE                        sweeps and tuning runs with their run counts\n"
    "  show FILE RUN                    one run: scenario, metrics, status (JSON)\n"
    "  export FILE SWEEP [--csv OUT]    one row per run: swept values, seed, every metric (stdout or OUT)\n";

std::int64_t parse_id(const std::string& s, const char* what) {
  const auto reading = base::read_integer(s);
  if (const auto* v = std::get_if<std::int64_t>(&reading); v != nullptr && *v > 0) return *v;
  throw std::invalid_argument(fmt::format("{} '{}' is not a positive integer id", what, s));
}

}  // namespace

int db_command(const std::vector<std::string>& args) {
  const bool help = std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
  if (args.empty() || help) {
    fmt::print(args.empty() ? stderr : stdout, "{}", kDbUsage);
    return args.empty() ? 2 : 0;
  }
  const std::string& sub = args[0];
  if (args.size() < 2) throw std::invalid_argument(fmt::format("db {}: missing FILE\n{}", sub, kDbUsage));
  if (!std::ifstream(args[1])) throw std::invalid_argument(fmt::format("{}: no such database", args[1]));
  if (sub == "export" && args.size() == 5 && args[3] == "--csv") check_output_file(args[4], "--csv");
  studies::ResultsDb db(args[1], studies::DbAccess::ReadOnly);
  if (sub == "list" && args.size() == 2) {
    fmt::print("{:>4} {:<6} {:<20} {:>6} {:>6}  {:<20}  {}\n", "id", "kind", "scenario", "runs", "done", "created", "spec");
    for (const auto& s : db.sweeps()) {
      fmt::print("{:>4} {:<6} {:<20} {:>6} {:>6}  {:<20}  {}\n", s.id, s.kind, s.scenario, s.runs, s.done, s.created_at, s.spec);
    }
    return 0;
  }
  if (sub == "show" && args.size() == 3) {
    fmt::print("{}\n", db.run_json(parse_id(args[2], "run")).dump(2));
    return 0;
  }
  if (sub == "export" && (args.size() == 3 || (args.size() == 5 && args[3] == "--csv"))) {
    const std::string csv = db.export_sweep_csv(parse_id(args[2], "sweep"));
    if (args.size() == 5)
      write_output_file(args[4], csv);
    else
      fmt::print("{}", csv);
    return 0;
  }
  print_error(fmt::format("april db: bad arguments\n{}", kDbUsage));
  return 2;
}

}  // namespace april::cli
