#include "sim/model_arch.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <algorithm>
#include <cmath>
#include <map>

#include "base/config.hpp"
#include "base/json_file.hpp"

namespace april::sim {

// Parameter counts follow the module layouts of Hugging Face transformers'
// modelling files (modeling_llama, modeling_qwen2, modeling_qwen3,
// modeling_qwen2_moe, modeling_qwen3_moe, modeling_mixtral, modeling_deepseek_v3,
// modeling_glm4_moe): every nn.Linear weight (and bias where the config turns it
// on), every RMSNorm weight, routers and their correction biases.

double bytes_per_element(DType t) { return t == DType::FP8 ? 1.0 : 2.0; }

std::string to_string(DType t) { return t == DType::FP8 ? "fp8" : "bf16"; }

DType dtype_from_string(const std::string& s, const std::string& where) {
  if (s == "bf16" || s == "bfloat16") return DType::BF16;
  if (s == "fp8") return DType::FP8;
  throw base::ConfigError(fmt::format("{}: unknown dtype '{}' (bf16 or fp8)", where, s));
}

namespace {

// Matrix weights and the small vectors (biases, norms) of a block, apart:
// FLOPs count the first only.
struct Parts {
  std::int64_t matmul = 0, vector = 0;
  [[nodiscard]] std::int64_t all() const { return matmul + vector; }
};

Parts attention_parts(const ModelArch& m) {
  Parts p;
  const auto h = m.hidden;
  if (m.attention == AttentionKind::MultiLatent) {
    // modeling_deepseek_v3 DeepseekV3Attention: q_a_proj, q_a_layernorm,
    // q_b_proj (or q_proj), kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj.
    const auto qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if (m.q_lora_rank > 0) {
      p.matmul += h * m.q_lora_rank + m.q_lora_rank * m.q_heads * qk_head;
      p.vector += m.q_lora_rank;
    } else {
      p.matmul += h * m.q_heads * qk_head;
    }
    p.matmul += h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * m.q_heads * (m.qk_nope_head_dim + m.v_head_dim);
    p.vector += m.kv_lora_rank;
    p.matmul += m.q_heads * m.v_head_dim * h;
    return p;
  }
  const auto q = m.q_heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  p.matmul = h * q + 2 * h * kv + q * h;
  if (m.qkv_bias) p.vector += q + 2 * kv;
  if (m.o_bias) p.vector += h;
  if (m.qk_norm) p.vector += 2 * m.head_dim;
  return p;
}

Parts mlp_parts(std::int64_t hidden, std::int64_t inter, bool bias) {
  return {3 * hidden * inter, bias ? 2 * inter + hidden : 0};  // gate, up, down
}

// One layer's parts; `active` counts the routed experts a token runs.
Parts layer_parts(const ModelArch& m, std::int64_t layer, bool active) {
  Parts p = attention_parts(m);
  p.vector += 2 * m.hidden;  // input and post-attention norms
  if (!m.moe_layer[static_cast<std::size_t>(layer)]) {
    const auto mlp = mlp_parts(m.hidden, m.intermediate, m.mlp_bias);
    p.matmul += mlp.matmul;
    p.vector += mlp.vector;
    return p;
  }
  const auto experts = active ? m.experts_per_token : m.routed_experts;
  p.matmul += experts * m.expert_params() + m.routed_experts * m.hidden;  // experts + router
  if (m.router_bias) p.vector += m.routed_experts;
  p.matmul += m.shared_experts * 3 * m.hidden * m.shared_intermediate + (m.shared_expert_gate ? m.hidden : 0);
  return p;
}

}  // namespace

std::int64_t ModelArch::attention_params_per_layer() const { return attention_parts(*this).all(); }
std::int64_t ModelArch::expert_params() const { return 3 * hidden * moe_intermediate; }
std::int64_t ModelArch::shared_expert_params() const {
  return shared_experts * 3 * hidden * shared_intermediate + (shared_expert_gate ? hidden : 0);
}
std::int64_t ModelArch::router_params() const { return routed_experts * hidden + (router_bias ? routed_experts : 0); }
std::int64_t ModelArch::dense_mlp_params() const { return mlp_parts(hidden, intermediate, mlp_bias).all(); }
std::int64_t ModelArch::layer_params(std::int64_t layer) const { return layer_parts(*this, layer, false).all(); }
std::int64_t ModelArch::layer_active_params(std::int64_t layer) const { return layer_parts(*this, layer, true).all(); }

std::int64_t ModelArch::embedding_params() const { return vocab * hidden * (tied_embeddings ? 1 : 2) + hidden; }

std::int64_t ModelArch::total_params() const {
  std::int64_t n = embedding_params();
  for (std::int64_t l = 0; l < layers; ++l) n += layer_params(l);
  return n;
}

std::int64_t ModelArch::active_params() const {
  std::int64_t n = embedding_params();
  for (std::int64_t l = 0; l < layers; ++l) n += layer_active_params(l);
  return n;
}

std::int64_t ModelArch::mtp_params() const {
  if (mtp_layers == 0) return 0;
  // modeling_deepseek_v3's checkpoint layout of a next-token-prediction module
  // (DeepSeek-V3 report, section 2.2): enorm, hnorm, eh_proj (2h -> h), one
  // decoder layer (an MoE layer), shared_head.norm, and its own copies of the
  // embedding and output head.
  const auto layer = layer_params(layers - 1);
  return mtp_layers * (2 * hidden + 2 * hidden * hidden + layer + hidden + 2 * vocab * hidden);
}

std::int64_t ModelArch::moe_layers() const {
  std::int64_t n = 0;
  for (const bool b : moe_layer) n += b ? 1 : 0;
  return n;
}

std::int64_t ModelArch::kv_bytes_per_token(DType kv) const {
  const auto b = static_cast<std::int64_t>(bytes_per_element(kv));
  // MLA caches the compressed latent and the decoupled rope key per layer
  // (DeepSeek-V2 paper, section 2.1.2); GQA caches K and V per KV head.
  if (attention == AttentionKind::MultiLatent) return layers * (kv_lora_rank + qk_rope_head_dim) * b;
  return 2 * layers * kv_heads * head_dim * b;
}

double ModelArch::linear_flops_per_token() const {
  double matmul = static_cast<double>(vocab * hidden);  // the output head
  for (std::int64_t l = 0; l < layers; ++l) matmul += static_cast<double>(layer_parts(*this, l, true).matmul);
  return 2.0 * matmul;
}

double ModelArch::activation_elements_per_token() const {
  double n = 0;
  for (std::int64_t l = 0; l < layers; ++l) {
    const bool moe = moe_layer[static_cast<std::size_t>(l)];
    const auto mlp = moe ? experts_per_token * moe_intermediate + shared_experts * shared_intermediate : intermediate;
    n += static_cast<double>(hidden + mlp);
  }
  return n;
}

double ModelArch::attention_flops_per_token(std::int64_t context_tok, bool mla_absorbed) const {
  const double ctx = static_cast<double>(context_tok), l = static_cast<double>(layers), h = static_cast<double>(q_heads);
  if (attention == AttentionKind::MultiLatent) {
    // Absorbed: scores over latent + rope key, values from the latent; the
    // up-projections ride on the query and output (counted with kv_b_proj).
    const double per_ctx = mla_absorbed ? static_cast<double>(2 * kv_lora_rank + qk_rope_head_dim)
                                        : static_cast<double>(qk_nope_head_dim + qk_rope_head_dim + v_head_dim);
    return 2.0 * l * h * per_ctx * ctx;
  }
  return 4.0 * l * h * static_cast<double>(head_dim) * ctx;  // QK^T and AV, 2 FLOPs per MAC
}

double expected_distinct_experts(double experts, double per_token, std::int64_t tokens) {
  if (experts <= 0 || tokens <= 0) return 0;
  return experts * (1.0 - std::pow(1.0 - per_token / experts, static_cast<double>(tokens)));
}

double ModelArch::expected_distinct_experts(std::int64_t tokens) const {
  return sim::expected_distinct_experts(static_cast<double>(routed_experts), static_cast<double>(experts_per_token), tokens);
}

double ModelArch::weights_read_bytes(std::int64_t tokens, DType t) const {
  const double all = static_cast<double>(total_params());
  if (!is_moe()) return all * bytes_per_element(t);
  const double per_layer_experts = static_cast<double>(routed_experts * expert_params());
  const double touched = expected_distinct_experts(tokens) * static_cast<double>(expert_params());
  const double moe = static_cast<double>(moe_layers());
  return (all - moe * per_layer_experts + moe * touched) * bytes_per_element(t);
}

namespace {

constexpr std::int64_t kMaxDim = 1 << 24;  // hidden sizes, vocabularies, ranks
constexpr std::int64_t kMaxLayers = 1 << 12;
constexpr std::int64_t kMaxExperts = 1 << 16;

enum class Family { Llama, Mistral, Qwen2, Qwen3, Qwen2Moe, Qwen3Moe, Mixtral, DeepseekMla, Glm4Moe };

const std::map<std::string, Family>& families() {
  static const std::map<std::string, Family> f = {
      {"LlamaForCausalLM", Family::Llama},
      {"MistralForCausalLM", Family::Mistral},
      {"Qwen2ForCausalLM", Family::Qwen2},
      {"Qwen3ForCausalLM", Family::Qwen3},
      {"Qwen2MoeForCausalLM", Family::Qwen2Moe},
      {"Qwen3MoeForCausalLM", Family::Qwen3Moe},
      {"MixtralForCausalLM", Family::Mixtral},
      {"DeepseekV2ForCausalLM", Family::DeepseekMla},
      {"DeepseekV3ForCausalLM", Family::DeepseekMla},
      {"Glm4MoeForCausalLM", Family::Glm4Moe},
  };
  return f;
}

std::string known_architectures() {
  std::string out;
  for (const auto& [k, v] : families()) out += (out.empty() ? "" : ", ") + k;
  return out;
}

[[noreturn]] void refuse(const base::JsonFile& f, const std::string& key, const std::string& why) {
  throw base::ConfigError(fmt::format("{}: {}", f.where(key), why));
}

// Divides `b`, or refuses naming `key`.
void must_divide(const base::JsonFile& f, const std::string& key, std::int64_t a, std::int64_t b, const std::string& b_name) {
  if (b % a != 0) refuse(f, key, fmt::format("{} does not divide {} {}", a, b_name, b));
}

// Features that change the cost in ways this model does not describe.
void refuse_unmodelled(const base::JsonFile& f, Family fam) {
  const auto act = base::json_string_or(f, "hidden_act", "silu");
  if (act != "silu" && act != "swiglu") refuse(f, "hidden_act", fmt::format("'{}' is not modelled (gated SiLU MLPs only)", act));
  const bool mistral_like = fam == Family::Mistral || fam == Family::Mixtral;
  const bool sliding = mistral_like ? f.doc.contains("sliding_window") && !f.doc["sliding_window"].is_null()
                                    : base::json_bool_or(f, "use_sliding_window", false);
  if (sliding) {
    refuse(f, mistral_like ? "sliding_window" : "use_sliding_window",
           "sliding-window attention is not modelled (its KV cache and attention cost differ)");
  }
}

DType checkpoint_dtype(const base::JsonFile& f) {
  const auto it = f.doc.find("quantization_config");
  if (it == f.doc.end() || it->is_null()) return DType::BF16;
  const auto method = it->is_object() && it->contains("quant_method") && (*it)["quant_method"].is_string()
                          ? (*it)["quant_method"].get<std::string>()
                          : std::string();
  if (method == "fp8") return DType::FP8;
  refuse(f, "quantization_config", fmt::format("quant_method '{}' is not modelled (fp8 only)", method));
}

void read_gqa(const base::JsonFile& f, ModelArch& m) {
  m.q_heads = base::json_int(f, "num_attention_heads", 1, kMaxDim);
  m.kv_heads = base::json_int_or(f, "num_key_value_heads", m.q_heads, 1, kMaxDim);
  must_divide(f, "num_key_value_heads", m.kv_heads, m.q_heads, "num_attention_heads");
  if (f.doc.contains("head_dim") && !f.doc["head_dim"].is_null()) {
    m.head_dim = base::json_int(f, "head_dim", 1, kMaxDim);
  } else {
    must_divide(f, "num_attention_heads", m.q_heads, m.hidden, "hidden_size (and no head_dim is given)");
    m.head_dim = m.hidden / m.q_heads;
  }
}

void read_sparse_layout(const base::JsonFile& f, ModelArch& m) {
  // modeling_qwen2_moe / modeling_qwen3_moe: layer i is sparse unless listed
  // in mlp_only_layers, and when (i + 1) % decoder_sparse_step == 0.
  const auto step = base::json_int_or(f, "decoder_sparse_step", 1, 1, kMaxLayers);
  std::vector<bool> dense_only(static_cast<std::size_t>(m.layers), false);
  if (const auto it = f.doc.find("mlp_only_layers"); it != f.doc.end() && !it->is_null()) {
    if (!it->is_array()) refuse(f, "mlp_only_layers", "expected a list of layer indices");
    for (const auto& v : *it) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= m.layers) {
        refuse(f, "mlp_only_layers", fmt::format("{} is not a layer index in [0, {})", v.dump(), m.layers));
      }
      dense_only[static_cast<std::size_t>(v.get<std::int64_t>())] = true;
    }
  }
  for (std::int64_t l = 0; l < m.layers; ++l)
    m.moe_layer[static_cast<std::size_t>(l)] = !dense_only[static_cast<std::size_t>(l)] && (l + 1) % step == 0;
}

void read_routed(const base::JsonFile& f, ModelArch& m, const std::string& experts_key) {
  m.routed_experts = base::json_int(f, experts_key, 1, kMaxExperts);
  m.experts_per_token = base::json_int(f, "num_experts_per_tok", 1, kMaxExperts);
  if (m.experts_per_token > m.routed_experts) {
    refuse(f, "num_experts_per_tok", fmt::format("{} is more than the {} experts", m.experts_per_token, m.routed_experts));
  }
}

// DeepSeek-V2/V3, Kimi-K2 (DeepseekV3ForCausalLM) and GLM-4.5: routed and
// shared experts, the first first_k_dense_replace layers dense.
void read_deepseek_moe(const base::JsonFile& f, ModelArch& m, bool every_freq) {
  if (!f.doc.contains("n_routed_experts") || f.doc["n_routed_experts"].is_null()) return;  // a dense variant
  read_routed(f, m, "n_routed_experts");
  m.moe_intermediate = base::json_int(f, "moe_intermediate_size", 1, kMaxDim);
  m.shared_experts = base::json_int_or(f, "n_shared_experts", 0, 0, kMaxExperts);
  m.shared_intermediate = m.moe_intermediate;
  const auto first_dense = base::json_int_or(f, "first_k_dense_replace", 0, 0, m.layers);
  const auto freq = every_freq ? base::json_int_or(f, "moe_layer_freq", 1, 1, kMaxLayers) : 1;
  for (std::int64_t l = 0; l < m.layers; ++l) m.moe_layer[static_cast<std::size_t>(l)] = l >= first_dense && l % freq == 0;
  m.mtp_layers = base::json_int_or(f, "num_nextn_predict_layers", 0, 0, kMaxLayers);
}

// Every count is an exact int64; a config whose sizes multiply past what any
// model has (1e15 parameters, a thousand times the largest published) is
// refused before anything is counted, so no product can overflow.
void refuse_implausible(const base::JsonFile& f, const ModelArch& m) {
  const double h = static_cast<double>(m.hidden), heads = static_cast<double>(m.q_heads);
  double attention = 0;
  if (m.attention == AttentionKind::MultiLatent) {
    const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double q_lora = static_cast<double>(m.q_lora_rank), kv_lora = static_cast<double>(m.kv_lora_rank);
    attention = h * q_lora + std::max(q_lora, h) * heads * qk + h * (kv_lora + static_cast<double>(m.qk_rope_head_dim)) +
                kv_lora * heads * static_cast<double>(m.qk_nope_head_dim + m.v_head_dim) + heads * static_cast<double>(m.v_head_dim) * h;
  } else {
    attention = 2.0 * h * static_cast<double>(m.head_dim) * static_cast<double>(m.q_heads + m.kv_heads);
  }
  const double experts = static_cast<double>(m.routed_experts) * static_cast<double>(m.moe_intermediate) +
                         static_cast<double>(m.shared_experts) * static_cast<double>(m.shared_intermediate);
  const double mlp = 3.0 * h * std::max(static_cast<double>(m.intermediate), experts) + static_cast<double>(m.routed_experts) * h;
  const double layer = attention + mlp + 4.0 * h;
  const double embed = 2.0 * static_cast<double>(m.vocab) * h;
  const double total =
      static_cast<double>(m.layers + m.mtp_layers) * layer + (1.0 + static_cast<double>(m.mtp_layers)) * (embed + 2.0 * h * h);
  if (!(total < 1e15)) {
    refuse(f, "hidden_size", fmt::format("the sizes in this config make about {:.3g} parameters, beyond the 1e15 april counts", total));
  }
}

}  // namespace

ModelArch model_from_config(const base::JsonFile& f, const std::string& name, const std::string& source) {
  ModelArch m;
  m.name = name;
  m.source = source;
  const auto arch_it = f.doc.find("architectures");
  if (arch_it == f.doc.end() || !arch_it->is_array() || arch_it->empty() || !(*arch_it)[0].is_string()) {
    refuse(f, "architectures", "missing or not a list of names; a Hugging Face causal-LM config.json names its class there");
  }
  m.architecture = (*arch_it)[0].get<std::string>();
  const auto fam_it = families().find(m.architecture);
  if (fam_it == families().end()) {
    refuse(f, "architectures", fmt::format("'{}' is not a supported architecture; supported: {}", m.architecture, known_architectures()));
  }
  const Family fam = fam_it->second;
  m.model_type = base::json_string_or(f, "model_type", "");
  refuse_unmodelled(f, fam);
  m.checkpoint_dtype = checkpoint_dtype(f);

  m.vocab = base::json_int(f, "vocab_size", 1, kMaxDim);
  m.hidden = base::json_int(f, "hidden_size", 1, kMaxDim);
  m.layers = base::json_int(f, "num_hidden_layers", 1, kMaxLayers);
  m.intermediate = base::json_int(f, "intermediate_size", 1, kMaxDim);
  m.tied_embeddings = base::json_bool_or(f, "tie_word_embeddings", false);
  m.moe_layer.assign(static_cast<std::size_t>(m.layers), false);

  switch (fam) {
    case Family::Llama:
    case Family::Mistral:
      read_gqa(f, m);
      m.qkv_bias = m.o_bias = base::json_bool_or(f, "attention_bias", false);  // modeling_llama: all four projections
      m.mlp_bias = base::json_bool_or(f, "mlp_bias", false);
      break;
    case Family::Qwen2:
      read_gqa(f, m);
      m.qkv_bias = true;  // modeling_qwen2: q, k, v with bias, o without
      break;
    case Family::Qwen3:
    case Family::Qwen3Moe:
      read_gqa(f, m);
      m.qkv_bias = m.o_bias = base::json_bool_or(f, "attention_bias", false);
      m.qk_norm = true;  // modeling_qwen3: q_norm and k_norm over head_dim
      if (fam == Family::Qwen3Moe) {
        read_routed(f, m, "num_experts");
        m.moe_intermediate = base::json_int(f, "moe_intermediate_size", 1, kMaxDim);
        read_sparse_layout(f, m);
      }
      break;
    case Family::Qwen2Moe:
      read_gqa(f, m);
      m.qkv_bias = true;
      read_routed(f, m, "num_experts");
      m.moe_intermediate = base::json_int(f, "moe_intermediate_size", 1, kMaxDim);
      m.shared_intermediate = base::json_int_or(f, "shared_expert_intermediate_size", 0, 0, kMaxDim);
      m.shared_experts = m.shared_intermediate > 0 ? 1 : 0;
      m.shared_expert_gate = m.shared_experts > 0;  // shared_expert_gate: Linear(hidden, 1)
      read_sparse_layout(f, m);
      break;
    case Family::Mixtral:
      read_gqa(f, m);
      read_routed(f, m, "num_local_experts");
      m.moe_intermediate = m.intermediate;  // every layer is MoE; intermediate_size is an expert's
      m.moe_layer.assign(static_cast<std::size_t>(m.layers), true);
      break;
    case Family::DeepseekMla: {
      m.attention = AttentionKind::MultiLatent;
      m.q_heads = base::json_int(f, "num_attention_heads", 1, kMaxDim);
      m.kv_heads = m.q_heads;
      m.q_lora_rank = base::json_int_or(f, "q_lora_rank", 0, 0, kMaxDim);
      m.kv_lora_rank = base::json_int(f, "kv_lora_rank", 1, kMaxDim);
      m.qk_nope_head_dim = base::json_int(f, "qk_nope_head_dim", 1, kMaxDim);
      m.qk_rope_head_dim = base::json_int(f, "qk_rope_head_dim", 1, kMaxDim);
      m.v_head_dim = base::json_int(f, "v_head_dim", 1, kMaxDim);
      m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
      if (base::json_bool_or(f, "attention_bias", false)) refuse(f, "attention_bias", "MLA with projection biases is not modelled");
      read_deepseek_moe(f, m, true);
      // noaux_tc routing (DeepSeek-V3 report, section 2.1.2) adds a bias per expert.
      m.router_bias = m.is_moe() && base::json_string_or(f, "topk_method", "") == "noaux_tc";
      break;
    }
    case Family::Glm4Moe:
      read_gqa(f, m);
      m.qkv_bias = base::json_bool_or(f, "attention_bias", false);  // modeling_glm4_moe: q, k, v; o_proj without
      m.qk_norm = base::json_bool_or(f, "use_qk_norm", false);
      read_deepseek_moe(f, m, false);
      m.router_bias = m.is_moe();  // Glm4MoeTopkRouter: e_score_correction_bias
      break;
  }
  refuse_implausible(f, m);
  return m;
}

ModelArch read_model_config(const std::string& path) {
  struct stat st {};
  std::string file = path;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) file = path + (path.back() == '/' ? "" : "/") + "config.json";
  return model_from_config(base::read_json_file(file, "model config"), path, file);
}

}  // namespace april::sim
