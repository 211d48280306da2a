#pragma once
// One prompt through a Hugging Face checkpoint on the live engine's own
// transformer: prefill, then one decode step per token against the KV cache,
// as the engine runs them. The smallest way to check that april reads a
// model as Hugging Face does (`april generate`). No torch in this header.
#include <cstdint>
#include <string>
#include <vector>

namespace april::live {

struct GenerateRequest {
  std::string checkpoint_dir;
  std::vector<std::int64_t> prompt_ids;
  std::int64_t max_new_tokens = 32;
  bool greedy = false;
  double temperature = 1.0;  // sampling only
  std::uint64_t seed = 0;    // sampling only
  std::string device = "cpu";
  std::string dtype = "float32";  // the engine's: float32 or bfloat16
  bool stop_at_eos = true;        // at the config's eos_token_id(s)
};

struct GenerateResult {
  std::vector<std::int64_t> output_ids;
  // Natural log of each generated token's probability under the model
  // (softmax of its logits at temperature 1, whatever the sampling
  // temperature), in float32 as Hugging Face reports scores.
  std::vector<float> output_logprobs;
  std::string finish_reason;  // "length" or "eos"
  std::int64_t parameters = 0;
  std::string architecture;
  double load_s = 0, prefill_s = 0, decode_s = 0;
};

// Throws base::ConfigError on a checkpoint it cannot read and
// std::invalid_argument on a request it cannot serve (an empty prompt, an id
// past the vocabulary), naming what is wrong.
GenerateResult generate(const GenerateRequest& request);

}  // namespace april::live
