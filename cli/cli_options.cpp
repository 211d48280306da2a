#include "cli/cli_options.hpp"

#include "base/integer_text.hpp"
#include "base/run_keys.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
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
  // Without a positional description, a stray word (`april simulate
  // handcheck`) would be dropped silently; with an empty one it is an error.
  const po::positional_options_description none;
  auto parser = po::command_line_parser(args).options(opts).positional(positional != nullptr ? *positional : none);
  try {
    po::store(parser.run(), vm);
  } catch (const po::too_many_positional_options_error&) {
    std::string stray;
    for (const auto& a : args) {
      if (!a.empty() && a[0] != '-') stray = stray.empty() ? a : stray;
    }
    throw std::invalid_argument(fmt::format("unexpected argument '{}': options start with -- (see --help)", stray));
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

void validate(boost::any& v, const std::vector<std::string>& values, IntegerOption* /*type tag*/, int /*overload tag*/) {
  namespace po = boost::program_options;
  po::validators::check_first_occurrence(v);
  const std::string& text = po::validators::get_single_string(values);
  const auto reading = base::read_integer(text);
  if (const auto* why = std::get_if<std::string>(&reading)) {
    // boost fills in the option's name when it adds the context.
    throw po::error_with_option_name(fmt::format("option '%canonical_option%': '{}' is {}", text, *why));
  }
  v = IntegerOption{std::get<std::int64_t>(reading)};
}

boost::program_options::typed_value<IntegerOption>* integer_option(std::int64_t* target) {
  auto* option = boost::program_options::value<IntegerOption>();
  if (target != nullptr) option->notifier([target](const IntegerOption& o) { *target = o.value; });
  return option;
}

boost::program_options::typed_value<IntegerOption>* integer_option(std::int64_t* target, std::int64_t default_value) {
  return integer_option(target)->default_value(IntegerOption{default_value}, std::to_string(default_value));
}

std::vector<std::string> policy_list(const std::vector<std::string>& items, const policies::PolicyRegistry& registry,
                                     const std::vector<std::string>& defaults) {
  if (items.empty()) return defaults;
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream ss(item);
    std::string part;
    bool any = false;
    while (std::getline(ss, part, ',')) {
      any = true;
      if (part.empty()) throw std::invalid_argument(fmt::format("--policy '{}': an empty policy name", item));
      (void)registry.get(part);  // unknown names list the known ones
      if (std::find(out.begin(), out.end(), part) != out.end()) {
        throw std::invalid_argument(fmt::format("--policy: '{}' is named twice", part));
      }
      out.push_back(part);
    }
    if (!any || item.back() == ',') throw std::invalid_argument(fmt::format("--policy '{}': an empty policy name", item));
  }
  return out;
}

std::string scenario_help() {
  std::vector<std::string> names;
  for (const auto& b : scenario::builtin_scenarios()) names.push_back(b.name);
  return fmt::format("a built-in scenario ({}) or a JSON scenario file", fmt::join(names, ", "));
}

std::string trace_format_help() {
  return "format of --trace: ours (our group-per-line JSONL, the default) or azure (the Azure LLM inference trace CSV); "
         "convert other CSV or JSONL files with `april trace import --map`";
}

void apply_cli_scenario(base::Config& config, const std::string& scenario, const std::vector<std::string>& sets,
                        std::optional<std::int64_t> steps, std::optional<std::int64_t> seed) {
  scenario::apply_scenario(config, scenario);
  for (const auto& s : sets) config.apply_assignment(s);
  if (steps) config.set(base::keys::kSteps, *steps, "--steps");
  if (seed) config.set(base::keys::kSeed, *seed, "--seed");
}

}  // namespace april::cli
