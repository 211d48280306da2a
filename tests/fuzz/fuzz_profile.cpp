// libFuzzer target: `april profile` files, and the calibration fit of those
// accepted.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "studies/calibration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto j = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(data), size));
    const auto profile = april::studies::profile_from_json(j, "fuzz.json");
    (void)april::studies::calibrate(profile);
  } catch (const std::exception&) {
  }
  return 0;
}
