#include "adapters/live/checkpoint/hf_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "base/config.hpp"
#include "base/json_file.hpp"

namespace april::live {
namespace {

constexpr std::int64_t kMaxDim = 1 << 24;
constexpr std::int64_t kMaxLayers = 1 << 12;

[[noreturn]] void refuse(const base::JsonFile& f, const std::string& key, const std::string& why) {
  throw base::ConfigError(fmt::format("{}: {}", f.where(key), why));
}

bool present(const base::JsonFile& f, const std::string& key) { return f.doc.contains(key) && !f.doc[key].is_null(); }

// Fields that mean a model the live transformer does not compute; each says
// what it is, so that the user knows it is the model, not the file.
void refuse_other_designs(const base::JsonFile& f, const std::string& arch) {
  for (const char* key : {"num_experts", "num_local_experts", "n_routed_experts", "moe_intermediate_size"}) {
    if (present(f, key)) refuse(f, key, fmt::format("{} is a mixture-of-experts model; the live backend runs dense models only", arch));
  }
  for (const char* key : {"kv_lora_rank", "q_lora_rank"}) {
    if (present(f, key))
      refuse(f, key, fmt::format("{} uses multi-head latent attention; the live backend runs grouped-query attention only", arch));
  }
  if (base::json_string_or(f, "hidden_act", "silu") != "silu") {
    refuse(f, "hidden_act", fmt::format("'{}': the live backend's MLP is SwiGLU (silu) only", base::json_string(f, "hidden_act")));
  }
  if (base::json_bool_or(f, "use_sliding_window", false))
    refuse(f, "use_sliding_window", "sliding-window attention is not computed by the live backend");
  if (const auto it = f.doc.find("layer_types"); it != f.doc.end() && it->is_array()) {
    for (const auto& t : *it) {
      if (t != "full_attention")
        refuse(f, "layer_types", fmt::format("layer type {} is not computed by the live backend (full_attention only)", t.dump()));
    }
  }
  if (present(f, "quantization_config"))
    refuse(f, "quantization_config", "quantized checkpoints are not read (bf16, fp16 or fp32 weights only)");
  if (base::json_bool_or(f, "mlp_bias", false)) refuse(f, "mlp_bias", "MLP biases are not computed by the live backend");
  // Qwen2 always has q/k/v biases and no output bias (modeling_qwen2.py);
  // Qwen3 and Llama put attention_bias on all four projections, output included.
  if (arch != "Qwen2ForCausalLM" && base::json_bool_or(f, "attention_bias", false)) {
    refuse(f, "attention_bias", "attention biases on all four projections are not computed by the live backend");
  }
}

// The rotary settings: transformers 4.x writes rope_theta and rope_scaling,
// 5.x one rope_parameters object holding both.
void read_rope(const base::JsonFile& f, ModelConfig& m) {
  std::string key = present(f, "rope_parameters") ? "rope_parameters" : "rope_scaling";
  // Each family's default theta (Qwen2Config, Qwen3Config, LlamaConfig: 10000).
  m.rope_theta = base::json_double_or(f, "rope_theta", 10000.0, 1.0, 1e12);
  if (!present(f, key)) return;
  const auto& r = f.doc[key];
  if (!r.is_object()) refuse(f, key, "expected an object");
  if (r.contains("rope_theta")) {
    if (!r["rope_theta"].is_number() || !(r["rope_theta"].get<double>() >= 1.0)) refuse(f, key, "rope_theta must be a number >= 1");
    m.rope_theta = r["rope_theta"].get<double>();
  }
  std::string type = "default";
  for (const char* k : {"rope_type", "type"}) {
    if (r.contains(k) && r[k].is_string()) type = r[k].get<std::string>();
  }
  if (type == "default") return;
  if (type != "llama3") refuse(f, key, fmt::format("rope type '{}' is not computed by the live backend (default and llama3 only)", type));
  const auto num = [&](const char* k, double lo) {
    if (!r.contains(k) || !r[k].is_number() || !(r[k].get<double>() >= lo))
      refuse(f, key, fmt::format("llama3 scaling needs {} (a number >= {})", k, lo));
    return r[k].get<double>();
  };
  Llama3RopeScaling s;
  s.factor = num("factor", 1.0);
  s.low_freq_factor = num("low_freq_factor", 1e-9);
  s.high_freq_factor = num("high_freq_factor", 1e-9);
  if (!(s.high_freq_factor > s.low_freq_factor)) refuse(f, key, "llama3 scaling needs high_freq_factor > low_freq_factor");
  s.original_max_pos = static_cast<std::int64_t>(num("original_max_position_embeddings", 1.0));
  m.llama3_rope = s;
}

// One id or a list of ids at `key`, appended to `out`.
void read_ids(const base::JsonFile& f, const std::string& key, std::vector<std::int64_t>& out) {
  if (!present(f, key)) return;
  const auto& v = f.doc[key];
  const auto add = [&](const nlohmann::json& x) {
    if (!x.is_number_integer() || x.get<std::int64_t>() < 0) refuse(f, key, "expected a token id or a list of them");
    if (std::find(out.begin(), out.end(), x.get<std::int64_t>()) == out.end()) out.push_back(x.get<std::int64_t>());
  };
  if (v.is_array()) {
    for (const auto& x : v) add(x);
  } else {
    add(v);
  }
}

}  // namespace

std::vector<std::string> hf_architectures() { return {"LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"}; }

HfModelConfig read_hf_config(const std::string& dir) {
  const auto path = (std::filesystem::path(dir) / "config.json").string();
  auto out = hf_config_from_json(base::read_json_file(path, "model config"), dir);
  const auto gen_path = std::filesystem::path(dir) / "generation_config.json";
  if (std::filesystem::exists(gen_path)) {
    const auto g = base::read_json_file(gen_path.string(), "generation config");
    read_ids(g, "eos_token_id", out.eos_token_ids);
  }
  return out;
}

HfModelConfig hf_config_from_json(const base::JsonFile& f, const std::string& name) {
  const std::string& dir = name;
  HfModelConfig out;
  auto& m = out.model;
  const auto arch_it = f.doc.find("architectures");
  if (arch_it == f.doc.end() || !arch_it->is_array() || arch_it->size() != 1 || !(*arch_it)[0].is_string()) {
    refuse(f, "architectures", "expected a list of one class name, as Hugging Face writes it");
  }
  m.architecture = (*arch_it)[0].get<std::string>();
  const auto supported = hf_architectures();
  if (std::find(supported.begin(), supported.end(), m.architecture) == supported.end()) {
    refuse(f, "architectures",
           fmt::format("'{}' is not loaded by the live backend; supported: {}", m.architecture, fmt::join(supported, ", ")));
  }
  refuse_other_designs(f, m.architecture);
  m.name = dir;
  out.model_type = base::json_string_or(f, "model_type", "");
  m.vocab = base::json_int(f, "vocab_size", 1, kMaxDim);
  m.d_model = base::json_int(f, "hidden_size", 1, kMaxDim);
  m.n_layers = base::json_int(f, "num_hidden_layers", 1, kMaxLayers);
  m.n_heads = base::json_int(f, "num_attention_heads", 1, kMaxDim);
  m.n_kv_heads = base::json_int_or(f, "num_key_value_heads", m.n_heads, 1, kMaxDim);
  if (m.n_heads % m.n_kv_heads != 0)
    refuse(f, "num_key_value_heads", fmt::format("{} does not divide num_attention_heads {}", m.n_kv_heads, m.n_heads));
  m.d_ff = base::json_int(f, "intermediate_size", 1, kMaxDim);
  if (present(f, "head_dim")) {
    m.explicit_head_dim = base::json_int(f, "head_dim", 2, kMaxDim);
  } else if (m.architecture == "Qwen3ForCausalLM") {
    m.explicit_head_dim = 128;  // Qwen3Config's default head_dim
  } else if (m.d_model % m.n_heads != 0) {
    refuse(f, "num_attention_heads", fmt::format("{} does not divide hidden_size {} (and no head_dim is given)", m.n_heads, m.d_model));
  }
  if (m.head_dim() % 2 != 0) refuse(f, "head_dim", fmt::format("{} is odd; rotary embeddings pair the head's dimensions", m.head_dim()));
  m.norm_eps = base::json_double_or(f, "rms_norm_eps", 1e-6, 1e-12, 1.0);
  m.tie_embeddings = base::json_bool_or(f, "tie_word_embeddings", false);
  m.qk_norm = m.architecture == "Qwen3ForCausalLM";
  m.qkv_bias = m.architecture == "Qwen2ForCausalLM";
  read_rope(f, m);
  out.max_position_embeddings = base::json_int_or(f, "max_position_embeddings", 0, 0, kMaxDim * 64);
  out.dtype = base::json_string_or(f, "torch_dtype", base::json_string_or(f, "dtype", ""));
  read_ids(f, "eos_token_id", out.eos_token_ids);
  return out;
}

}  // namespace april::live
