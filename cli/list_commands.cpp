// `april policies` and `april keys`.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "policies/registry.hpp"
#include "scenario/scenario.hpp"

namespace april::cli {
namespace {

void print_knob(const base::Knob& k) {
  const std::string unit = k.unit.empty() ? "" : fmt::format(" [{}]", k.unit);
  const std::string accepts = k.validate.accepts.empty() ? "" : fmt::format(", accepts {}", k.validate.accepts);
  fmt::print("  {:<34} {:<8} default {}{}{}\n      {}\n", k.name, base::type_name(k.type), base::to_string(k.default_value), unit, accepts,
             k.help);
}

bool wants_help(const std::vector<std::string>& args, const char* usage) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      fmt::print("{}", usage);
      return true;
    }
  }
  if (!args.empty()) throw std::invalid_argument(fmt::format("unexpected argument '{}'", args.front()));
  return false;
}

}  // namespace

int policies_command(const std::vector<std::string>& args) {
  if (wants_help(args, "usage: april policies\n  Lists the scheduling policies, their parameters and defaults.\n")) return 0;
  const auto registry = policies::builtin_policies();
  for (const auto& e : registry.entries()) {
    fmt::print("{}\n  {}\n", e.name, e.summary);
    if (e.knobs.empty()) fmt::print("  (no parameters)\n");
    for (const auto& k : e.knobs) print_knob(k);
    fmt::print("\n");
  }
  return 0;
}

int keys_command(const std::vector<std::string>& args_in) {
  std::vector<std::string> args = args_in;
  const bool markdown = !args.empty() && args.front() == "--markdown";
  if (markdown) args.erase(args.begin());
  if (wants_help(args,
                 "usage: april keys [--markdown]\n  Lists every scenario key: type, default, unit, accepted values and meaning.\n"
                 "  --markdown  as a Markdown table (that of docs/keys.md)\n")) {
    return 0;
  }
  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  if (markdown) {
    fmt::print("| key | type | default | unit | accepts | meaning |\n|---|---|---|---|---|---|\n");
    // A '|' inside a cell would end it: escaped, as Markdown tables require.
    const auto cell = [](const std::string& text) {
      std::string out;
      for (char ch : text) {
        if (ch == '|') out += '\\';
        out += ch;
      }
      return out;
    };
    for (const auto& [name, k] : schema.knobs()) {
      fmt::print("| `{}` | {} | `{}` | {} | {} | {} |\n", name, base::type_name(k.type), cell(base::to_string(k.default_value)), k.unit,
                 cell(k.validate.accepts), cell(k.help));
    }
    return 0;
  }
  for (const auto& [name, k] : schema.knobs()) print_knob(k);
  fmt::print("\nbuilt-in scenarios:\n");
  for (const auto& b : scenario::builtin_scenarios()) {
    fmt::print("  {:<10} {}\n", b.name, b.description);
    for (const auto& [key, value] : b.settings) fmt::print("      {} = {}\n", key, value);
  }
  return 0;
}

}  // namespace april::cli
