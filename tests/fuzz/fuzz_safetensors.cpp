// libFuzzer target: safetensors files as the checkpoint loader reads them
// (header length, JSON header, dtypes, shapes, byte ranges). Any input is read
// or refused with an exception; a crash, a sanitizer report (a range past
// the buffer, an overflowing size) or a hang is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "hf/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    std::map<std::string, std::string> metadata;
    const auto tensors = april::live::parse_safetensors(reinterpret_cast<const std::byte*>(data), size, "fuzz.safetensors", &metadata);
    std::size_t sum = 0;
    for (const auto& t : tensors) {
      // Every byte of every tensor must lie inside the input.
      for (std::size_t i = 0; i < t.bytes; i += 997) sum += static_cast<std::size_t>(t.data[i]);
      if (t.bytes > 0) sum += static_cast<std::size_t>(t.data[t.bytes - 1]);
    }
    (void)sum;
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the library's own message would reach the user
  } catch (const std::exception&) {
  }
  return 0;
}
