// libFuzzer target: topology files, and the weight-sync plan of those accepted.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "base/json_value.hpp"
#include "sim/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    // The reader's own parse (read_topology_file), which refuses bad JSON in our words.
    const auto j = april::base::parse_json_document(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    const auto topo = april::sim::topology_from_json(j, "fuzz.json");
    (void)april::sim::plan_weight_sync(topo, 8e9);
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the library's own message would reach the user
  } catch (const std::exception&) {
  }
  return 0;
}
