// libFuzzer target: topology files, and the weight-sync plan of those accepted.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto j = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(data), size));
    const auto topo = april::sim::topology_from_json(j, "fuzz.json");
    (void)april::sim::plan_weight_sync(topo, 8e9);
  } catch (const std::exception&) {
  }
  return 0;
}
