// `april calibrate`: fit the simulator's linear engine, train and sync models
// to a profile from `april profile`.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/json_file.hpp"
#include "cli/commands.hpp"
#include "cli/output_paths.hpp"
#include "scenario/scenario.hpp"
#include "studies/calibration.hpp"
#include "studies/calibration_check.hpp"

namespace april::cli {
int calibrate_command(const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "usage: april calibrate PROFILE --out MODEL.json\n"
      "Fits the simulator's linear engine model (per running request; a decode pass: fixed + per KV token;\n"
      "a prefill pass: fixed + per token + per padded token) and train = base + per_tok * tokens by\n"
      "non-negative least squares on relative error, reports the error on held-out points (every fourth)\n"
      "next to the profile's measurement noise, and writes a scenario fragment that makes the simulator\n"
      "use the fitted models (`--scenario MODEL.json`, or \"base\" plus these keys in a scenario file).\n";
  std::string in, out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    }
    if (args[i] == "--out" && i + 1 < args.size()) {
      out = args[++i];
    } else if (in.empty() && args[i].rfind("--", 0) != 0) {
      in = args[i];
    } else {
      throw std::invalid_argument(fmt::format("unexpected argument '{}'\n{}", args[i], kUsage));
    }
  }
  if (in.empty() || out.empty()) throw std::invalid_argument(fmt::format("PROFILE and --out are required\n{}", kUsage));
  check_output_file(out, "--out");
  const auto profile = studies::profile_from_json(base::read_json_file(in, "profile").doc, in);
  const auto c = studies::calibrate(profile);
  studies::check_simulate_accepts(c, profile, scenario::make_schema(policies::builtin_policies()), in);
  fmt::print("{}\n{} iterations fitted, {} held out; train held-out error {:.1f}%\n", studies::describe(c), c.iteration_points,
             c.heldout_points, 100 * c.train_heldout_mape);
  write_output_file(out, studies::calibration_scenario_json(c).dump(2) + "\n");
  fmt::print("wrote {}\n", out);
  return 0;
}

}  // namespace april::cli
