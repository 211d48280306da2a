// libFuzzer target: the tokenizer. The input's first line is text to
// encode; the rest is a tokenizer.json. A tokenizer that loads must encode
// the text (or refuse it as invalid UTF-8) and decode what it made.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "hf/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const auto nl = input.find('\n');
  const std::string text = nl == std::string::npos ? std::string() : input.substr(0, nl);
  const std::string json = nl == std::string::npos ? input : input.substr(nl + 1);
  try {
    const auto t = april::hf::Tokenizer::parse(json, "tokenizer.json");
    const auto ids = t.encode(text);
    (void)t.decode(ids);
    (void)t.decode(ids, true);
  } catch (const nlohmann::json::exception&) {
    std::abort();
  } catch (const std::exception&) {
  }
  return 0;
}
