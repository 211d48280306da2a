// libFuzzer target: the math prompt set and the answer check. The input is
// read as a JSONL prompt file (GSM8K's layout), and its text, cut in two at
// the first tab, as a model's response and a gold answer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tasks/math/math_verifier.hpp"
#include "tasks/math/prompt_dataset.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace april::live::math;
  const std::string input(reinterpret_cast<const char*>(data), size);
  try {
    std::istringstream in(input);
    auto options = *dataset_layout("gsm8k");
    options.path = "fuzz.jsonl";
    (void)parse_prompt_dataset(in, options);
  } catch (const nlohmann::json::exception&) {
    std::abort();
  } catch (const std::exception&) {
  }
  const auto tab = input.find('\t');
  const std::string response = input.substr(0, tab), gold = tab == std::string::npos ? std::string("42") : input.substr(tab + 1);
  try {
    (void)judge_math_response(response, gold);
  } catch (const nlohmann::json::exception&) {
    std::abort();
  } catch (const std::exception&) {
  }
  return 0;
}
