// libFuzzer target: `april profile` files, and the calibration fit of those
// accepted.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "base/json_file.hpp"
#include "studies/calibration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    // The reader's own parse (april calibrate's base::read_json_file), which refuses bad JSON in our words.
    const auto f = april::base::parse_json_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json", "profile");
    const auto profile = april::studies::profile_from_json(f.doc, "fuzz.json");
    (void)april::studies::calibrate(profile);
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the library's own message would reach the user
  } catch (const std::exception&) {
  }
  return 0;
}
