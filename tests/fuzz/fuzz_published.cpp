// libFuzzer target: published-run files (`april reproduce FILE`), read and
// checked row by row up front (every row's scenario validated), without
// running the simulations. Any input is read or refused with our error; a
// crash, a sanitizer report, a hang or a JSON library exception is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "base/json_file.hpp"
#include "policies/registry.hpp"
#include "studies/published_runs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto registry = april::policies::builtin_policies();
  try {
    const auto file =
        april::base::parse_json_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json", "published-run file");
    (void)april::studies::published_setup_from_json(file, registry);
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the library's own message would reach the user
  } catch (const std::exception&) {
    // A clear refusal is the right outcome for bad input.
  }
  return 0;
}
