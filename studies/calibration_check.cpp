#include "studies/calibration_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "base/stats.hpp"

namespace april::studies {
namespace {

// "the profile's NAME, slowest i (t s), j (t s), k (t s); median m s".
std::string slowest(const std::vector<double>& times_s, const std::string& name) {
  if (times_s.empty()) return fmt::format("no {} in the profile", name);
  std::vector<std::size_t> order(times_s.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return times_s[a] > times_s[b]; });
  order.resize(std::min<std::size_t>(order.size(), 3));
  std::vector<std::string> parts;
  for (const auto i : order) parts.push_back(fmt::format("{} ({:.6g} s)", i, times_s[i]));
  return fmt::format("the profile's {}, slowest {}; median {:.6g} s", name, fmt::join(parts, ", "), base::median(times_s));
}

template <typename Points>
std::vector<double> times_of(const Points& points) {
  std::vector<double> out;
  for (const auto& p : points) out.push_back(p.time_s);
  return out;
}

}  // namespace

std::string probes_behind(const Profile& p, const std::string& key) {
  if (key == "engine.slowdown_beside_train") return slowest(times_of(p.iterations_beside_train), "iterations_beside_train");
  if (key == "train.slowdown_beside_engines") return slowest(times_of(p.train_beside_engines), "train_beside_engines");
  if (key == "train.handoff_s") {
    return slowest(p.train_start_latency_s, "train_start_latency_s") + "; " + slowest(p.train_end_latency_s, "train_end_latency_s");
  }
  if (key.rfind("engine.abort_", 0) == 0) return slowest(times_of(p.aborts), "aborts");
  if (key.rfind("engine.", 0) == 0) return slowest(times_of(p.iterations), "iterations");
  if (key.rfind("train.", 0) == 0) return slowest(times_of(p.train), "train");
  if (key.rfind("sync.", 0) == 0) return slowest(p.sync_s, "sync_s");
  return "";
}

void check_simulate_accepts(const Calibration& c, const Profile& profile, const base::ConfigSchema& schema,
                            const std::string& profile_path) {
  const auto fragment = calibration_scenario_json(c);
  std::vector<std::string> refused;
  for (const auto& [section, keys] : fragment.items()) {
    if (!keys.is_object()) continue;
    for (const auto& [name, value] : keys.items()) {
      const std::string key = section + "." + name;
      base::Config config(schema);
      try {
        config.set_from_json(key, value, "fitted");
      } catch (const base::ConfigError& e) {
        refused.push_back(fmt::format("  {}\n    fitted on {}", e.what(), probes_behind(profile, key)));
      }
    }
  }
  if (refused.empty()) return;
  throw std::invalid_argument(
      fmt::format("{}: the fit makes a model that `april simulate` would refuse:\n{}\nA probe far slower than its kind (a stall, "
                  "another job on the machine) decides the fit; profile again, or remove those points",
                  profile_path, fmt::join(refused, "\n")));
}

}  // namespace april::studies
