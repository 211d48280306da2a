// libFuzzer target: scenario files. Any input is either read or refused with
// a base::ConfigError (or another std::exception naming what is wrong); a
// crash, a sanitizer report or a hang is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "policies/registry.hpp"
#include "scenario/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto registry = april::policies::builtin_policies();
  static const auto schema = april::scenario::make_schema(registry);
  april::base::Config config(schema);
  try {
    april::base::load_config_text(config, std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    april::scenario::validate_scenario(config);
    (void)registry.get("april").make(config);
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the library's own message would reach the user
  } catch (const std::exception&) {
    // A clear refusal is the right outcome for bad input.
  }
  return 0;
}
