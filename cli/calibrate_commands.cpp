// `april calibrate`: fit the simulator's linear engine, train and sync models
// to a profile from `april profile`.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "adapters/calibration.hpp"
#include "cli/atomic_file.hpp"
#include "cli/commands.hpp"

namespace april::cli {
int calibrate_command(const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "usage: april calibrate PROFILE --out MODEL.json\n"
      "Fits iteration = base + per_request * batch + per_kv_tok * kv + per_prefill_tok * prefill and\n"
      "train = base + per_tok * tokens by least squares (non-negative), reports the error on held-out points\n"
      "(every fourth), and writes a scenario fragment that makes the simulator use the fitted models\n"
      "(`--scenario MODEL.json`, or \"base\" plus these keys in a scenario file).\n";
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
  std::ifstream f(in);
  if (!f) throw std::invalid_argument(fmt::format("{}: cannot open", in));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(f);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(fmt::format("{}: invalid JSON at byte {}", in, e.byte));
  }
  const auto c = adapters::calibrate(adapters::profile_from_json(j, in));
  fmt::print("iteration: {:.1f} us + {:.3f} us/request + {:.4f} ns/KV token + {:.4f} us/prefill token; held-out error {:.1f}% "
             "({} fitted, {} held out)\n",
             c.base_us, c.per_request_us, c.per_kv_tok_ns, c.per_prefill_tok_us, 100 * c.iteration_heldout_mape, c.iteration_points,
             c.heldout_points);
  fmt::print("train: {:.3f} s + {:.3f} us/token; held-out error {:.1f}%\nsync: {:.4f} s (median)\n", c.train_base_s, c.train_per_tok_us,
             100 * c.train_heldout_mape, c.sync_s);
  write_file_atomically(out, adapters::calibration_scenario_json(c).dump(2) + "\n");
  fmt::print("wrote {}\n", out);
  return 0;
}

}  // namespace april::cli
