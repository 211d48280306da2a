#pragma once
// A Hugging Face checkpoint's config.json read into the live backend's model
// config: the three dense families the live transformer computes exactly
// (Qwen3ForCausalLM, Qwen2ForCausalLM, LlamaForCausalLM). Anything it would
// compute differently from Hugging Face (experts, latent attention, sliding
// windows, other rotary scalings, biases it has no place for) is refused by
// field, never approximated. Plain C++: no torch.
#include <cstdint>
#include <string>
#include <vector>

#include "adapters/live/model_config.hpp"

namespace april::base {
struct JsonFile;
}

namespace april::live {

struct HfModelConfig {
  ModelConfig model;  // max_seq 0: the caller sets what its run needs
  std::string model_type;
  std::int64_t max_position_embeddings = 0;
  // Where generation stops: config.json's eos_token_id and, when present,
  // generation_config.json's (either may be one id or a list).
  std::vector<std::int64_t> eos_token_ids;
  std::string dtype;  // as written ("bfloat16"), "" when the config names none
};

// The architectures read_hf_config accepts.
std::vector<std::string> hf_architectures();

// Reads `dir`/config.json (and generation_config.json when there). Throws
// base::ConfigError naming the file, line and field.
HfModelConfig read_hf_config(const std::string& dir);
// The same from a parsed config.json alone (no generation_config.json);
// `name` names the model in reports.
HfModelConfig hf_config_from_json(const base::JsonFile& config, const std::string& name);

}  // namespace april::live
