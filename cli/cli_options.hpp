#pragma once
// Option handling shared by the subcommands.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "base/config.hpp"
#include "base/workload_source.hpp"
#include "policies/registry.hpp"

namespace april::cli {

// Parses a subcommand's arguments; prints the options and returns false on
// --help. Errors (unknown options, missing required ones) throw.
bool parse_command_line(const std::vector<std::string>& args, const boost::program_options::options_description& opts,
                        boost::program_options::variables_map& vm,
                        const boost::program_options::positional_options_description* positional = nullptr);

// --policy values (repeated, or comma lists) as policy names: an empty name,
// a name given twice or an unknown one is an error; none given: `defaults`.
std::vector<std::string> policy_list(const std::vector<std::string>& items, const policies::PolicyRegistry& registry,
                                     const std::vector<std::string>& defaults);

// Help texts that list what is accepted, generated so that they stay true.
std::string scenario_help();      // the built-in scenarios
std::string trace_format_help();  // the trace formats

// An integer option's value, read by base::read_integer as --set and the
// scenario files read integers: 1e3 is 1000 everywhere, and a value past the
// 64-bit range is refused, quoted as written.
struct IntegerOption {
  std::int64_t value = 0;
};
// boost::program_options finds this by argument-dependent lookup.
void validate(boost::any& v, const std::vector<std::string>& values, IntegerOption* /*type tag*/, int /*overload tag*/);

// An integer option; with a target, the value (or the default) is stored there.
boost::program_options::typed_value<IntegerOption>* integer_option(std::int64_t* target = nullptr);
boost::program_options::typed_value<IntegerOption>* integer_option(std::int64_t* target, std::int64_t default_value);

// The value of an optional integer option, if given.
template <typename VariablesMap>
std::optional<std::int64_t> opt_int(const VariablesMap& vm, const char* name) {
  if (!vm.count(name)) return std::nullopt;
  return vm[name].template as<IntegerOption>().value;
}

// The groups of --trace in --trace-format ("ours" or azure), or none when no
// trace was given.
std::optional<std::vector<base::GroupSpec>> load_cli_trace(const std::string& path, const std::string& format);

// A scenario (built-in name or file), then --set overrides, then --steps / --seed.
void apply_cli_scenario(base::Config& config, const std::string& scenario, const std::vector<std::string>& sets,
                        std::optional<std::int64_t> steps, std::optional<std::int64_t> seed);

}  // namespace april::cli
