#include "sim/model_catalog.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include "base/config.hpp"
#include "base/json_file.hpp"

namespace april::sim {

const std::vector<BuiltinModel>& builtin_model_table() {
  // Published sizes as each model card states them (cited per row); the counts
  // april derives from the configs must match them within 1% (model_arch_test).
  static const std::vector<BuiltinModel> table = {
      {"qwen3-0.6b", 0.596e9, 0.596e9, "Qwen/Qwen3-0.6B model card (0.6B; 0.44B non-embedding) and config.json"},
      {"qwen3-4b", 4.02e9, 4.02e9, "Qwen/Qwen3-4B model card (4.0B) and config.json"},
      {"qwen3-8b", 8.19e9, 8.19e9, "Qwen/Qwen3-8B model card (8.2B) and config.json"},
      {"qwen3-30b-a3b", 30.5e9, 3.35e9, "Qwen/Qwen3-30B-A3B model card (30.5B total, 3.3B activated) and config.json"},
      {"qwen3-235b-a22b", 235e9, 22e9,
       "Qwen/Qwen3-235B-A22B model card (235B total, 22B activated) and config.json; the same shape in slime's "
       "scripts/models/qwen3-235B-A22B.sh (94 layers, hidden 4096, 64 query and 4 KV heads of 128, 128 experts of "
       "1536, top-8, untied)"},
      {"qwen2.5-math-7b", 7.62e9, 7.62e9, "Qwen/Qwen2.5-Math-7B model card (7.61B) and config.json"},
      {"r1-distill-qwen-1.5b", 1.78e9, 1.78e9,
       "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B config.json (Qwen2, untied embeddings: 1.78B; '1.5B' in the name)"},
      {"llama-3.1-8b", 8.03e9, 8.03e9, "meta-llama/Llama-3.1-8B model card (8B) and config.json"},
      {"mixtral-8x7b", 46.7e9, 12.9e9,
       "mistralai/Mixtral-8x7B-v0.1 config.json; Mistral AI, 'Mixtral of experts' (2023-12-11): 46.7B total, 12.9B per token"},
      {"deepseek-v3", 671e9, 37.6e9,
       "deepseek-ai/DeepSeek-V3 config.json and technical report (arXiv 2412.19437): 671B total, 37B activated; "
       "685B with the multi-token-prediction module"},
  };
  return table;
}

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> out;
  for (const auto& m : builtin_model_table()) out.push_back(m.name);
  return out;
}

ModelArch resolve_model(const std::string& name_or_path) {
  for (const auto& [name, text] : builtin_model_config_texts()) {
    if (name != name_or_path) continue;
    std::string citation;
    for (const auto& b : builtin_model_table()) {
      if (b.name == name) citation = b.citation;
    }
    const auto file = base::parse_json_text(text, "sim/models/" + name + ".json", "model config");
    return model_from_config(file, name, citation.empty() ? file.path : citation);
  }
  struct stat st {};
  if (::stat(name_or_path.c_str(), &st) != 0) {
    throw base::ConfigError(fmt::format("model '{}': neither a built-in model ({}) nor a config.json file or a folder holding one",
                                        name_or_path, fmt::join(builtin_model_names(), ", ")));
  }
  return read_model_config(name_or_path);
}

}  // namespace april::sim
