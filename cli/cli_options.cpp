#include "cli/cli_options.hpp"

#include <iostream>
#include <sstream>

#include "scenario/scenario.hpp"
#include "traces/trace_import.hpp"

namespace april::cli {

std::optional<std::vector<base::GroupSpec>> load_cli_trace(const std::string& path, const std::string& format) {
  if (path.empty()) return std::nullopt;
  traces::ImportOptions io;
  io.format = format;
  return traces::load_trace(path, io);
}

bool parse_command_line(const std::vector<std::string>& args, const boost::program_options::options_description& opts,
                        boost::program_options::variables_map& vm,
                        const boost::program_options::positional_options_description* positional) {
  namespace po = boost::program_options;
  auto parser = po::command_line_parser(args).options(opts);
  if (positional != nullptr) parser.positional(*positional);
  po::store(parser.run(), vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ',')) {
      if (!part.empty()) out.push_back(part);
    }
  }
  return out;
}

void apply_cli_scenario(base::Config& config, const std::string& scenario, const std::vector<std::string>& sets,
                        std::optional<std::int64_t> steps, std::optional<std::int64_t> seed) {
  scenario::apply_scenario(config, scenario);
  for (const auto& s : sets) config.apply_assignment(s);
  if (steps) config.set("steps", *steps, "--steps");
  if (seed) config.set("seed", *seed, "--seed");
}

}  // namespace april::cli
