// libFuzzer target: a Hugging Face config.json as the live backend reads it
// (architectures, sizes, rotary settings, the designs it refuses), and the
// parameter count of what it accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "adapters/live/checkpoint/hf_config.hpp"
#include "base/json_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto file = april::base::parse_json_text(std::string(reinterpret_cast<const char*>(data), size), "config.json", "model config");
    const auto c = april::live::hf_config_from_json(file, "fuzz");
    (void)c.model.parameters();
    (void)c.model.head_dim();
  } catch (const nlohmann::json::exception&) {
    std::abort();
  } catch (const std::exception&) {
  }
  return 0;
}
