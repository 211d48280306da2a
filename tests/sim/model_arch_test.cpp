// Parameter, KV and FLOP counts of each architecture family, on tiny configs
// counted by hand (the sums are in the comments), and every built-in model
// against its published size.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/config.hpp"
#include "base/json_file.hpp"
#include "sim/model_arch.hpp"
#include "sim/model_catalog.hpp"

namespace april::sim {
namespace {

ModelArch parse(const std::string& text) {
  return model_from_config(base::parse_json_text(text, "tiny.json", "model config"), "tiny", "test");
}

std::string refusal(const std::string& text) {
  try {
    (void)parse(text);
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

// Dimensions shared by the tiny configs: vocab 10, hidden 8, 4 query heads.
// Embedding 80 + untied head 80 + final norm 8 = 168.
const std::string kLlama = R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 10, "hidden_size": 8,
  "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 16})";

TEST(ModelArch, LlamaCountsByHand) {
  const auto m = parse(kLlama);
  // head_dim 8/4 = 2. Attention q 8x8 + k 8x4 + v 8x4 + o 8x8 = 192; MLP 3x8x16 = 384; norms 16.
  EXPECT_EQ(m.attention_params_per_layer(), 192);
  EXPECT_EQ(m.layer_params(0), 592);
  EXPECT_EQ(m.total_params(), 2 * 592 + 168);
  EXPECT_EQ(m.active_params(), m.total_params());
  EXPECT_EQ(m.kv_bytes_per_token(DType::BF16), 2 * 2 * 2 * 2 * 2);  // K,V x layers x kv_heads x head_dim x 2 B
  EXPECT_EQ(m.kv_bytes_per_token(DType::FP8), 16);
  // attention_bias puts biases on q, k, v and o: 8 + 4 + 4 + 8 per layer.
  auto biased = kLlama;
  biased.insert(1, R"("attention_bias": true, )");
  EXPECT_EQ(parse(biased).total_params(), 1352 + 2 * 24);
}

TEST(ModelArch, Qwen2HasQkvBiasAndTiedHead) {
  const auto m = parse(R"({"architectures": ["Qwen2ForCausalLM"], "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 16, "tie_word_embeddings": true,
    "use_sliding_window": false, "sliding_window": 4096})");
  // Layer 592 + q/k/v biases 16 = 608; tied: embedding 80 + norm 8.
  EXPECT_EQ(m.total_params(), 2 * 608 + 88);
}

const std::string kQwen3 = R"({"architectures": ["Qwen3ForCausalLM"], "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4, "intermediate_size": 16})";

TEST(ModelArch, Qwen3HasQkNormAndExplicitHeadDim) {
  const auto m = parse(kQwen3);
  // q 8x16 + k 8x8 + v 8x8 + o 16x8 = 384, q/k norms 2x4 = 8: 392; + MLP 384 + norms 16 = 792.
  EXPECT_EQ(m.layer_params(1), 792);
  EXPECT_EQ(m.total_params(), 2 * 792 + 168);
  EXPECT_EQ(m.kv_bytes_per_token(DType::BF16), 2 * 2 * 2 * 4 * 2);
  // Linear FLOPs: 2 x (per layer 384 + 384, two layers, head 80) = 3232.
  EXPECT_DOUBLE_EQ(m.linear_flops_per_token(), 3232.0);
  // Attention: 4 x layers x heads x head_dim per context token = 128.
  EXPECT_DOUBLE_EQ(m.attention_flops_per_token(100, true), 12800.0);
}

TEST(ModelArch, Qwen3MoeCountsRoutedExpertsAndDenseLayers) {
  const auto m = parse(R"({"architectures": ["Qwen3MoeForCausalLM"], "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4, "intermediate_size": 16, "num_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 6, "decoder_sparse_step": 1, "mlp_only_layers": [1]})");
  // Layer 0 (MoE): attention 392 + norms 16 + router 4x8 + 4 experts x 3x8x6 = 1016; a token runs 2 experts: 728.
  // Layer 1 (dense, mlp_only_layers): 792.
  EXPECT_EQ(m.layer_params(0), 1016);
  EXPECT_EQ(m.layer_active_params(0), 728);
  EXPECT_EQ(m.total_params(), 1016 + 792 + 168);
  EXPECT_EQ(m.active_params(), 728 + 792 + 168);
  EXPECT_EQ(m.moe_layers(), 1);
}

TEST(ModelArch, Qwen2MoeHasAGatedSharedExpert) {
  const auto m = parse(R"({"architectures": ["Qwen2MoeForCausalLM"], "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 16, "num_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 6, "shared_expert_intermediate_size": 10})");
  // Attention 192 + biases 16 + norms 16 + router 32 + experts 576 + shared 3x8x10 + its gate 8 = 1080.
  EXPECT_EQ(m.total_params(), 1080 + 168);
  EXPECT_EQ(m.active_params(), 208 + 16 + 32 + 288 + 248 + 168);
}

TEST(ModelArch, MixtralEveryLayerIsMoe) {
  const auto m = parse(R"({"architectures": ["MixtralForCausalLM"], "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 6, "num_local_experts": 4,
    "num_experts_per_tok": 2, "sliding_window": null})");
  // Attention 192 + norms 16 + router 32 + 4 experts x 144 = 816; active 192 + 16 + 32 + 288 = 528.
  EXPECT_EQ(m.total_params(), 816 + 168);
  EXPECT_EQ(m.active_params(), 528 + 168);
}

const std::string kDeepseek = R"({"architectures": ["DeepseekV3ForCausalLM"], "vocab_size": 10, "hidden_size": 8,
  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "q_lora_rank": 4, "kv_lora_rank": 3,
  "qk_nope_head_dim": 2, "qk_rope_head_dim": 1, "v_head_dim": 2, "intermediate_size": 16, "moe_intermediate_size": 6,
  "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1,
  "moe_layer_freq": 1, "topk_method": "noaux_tc", "num_nextn_predict_layers": 1})";

TEST(ModelArch, DeepseekMlaAndSharedExperts) {
  const auto m = parse(kDeepseek);
  // MLA: q_a 8x4 + norm 4 + q_b 4x2x3 + kv_a 8x(3+1) + norm 3 + kv_b 3x2x(2+2) + o 2x2x8 = 151.
  EXPECT_EQ(m.attention_params_per_layer(), 151);
  // Layer 0 dense: 151 + 16 + 384 = 551. Layer 1: 151 + 16 + router 32 + bias 4 + experts 576 + shared 144 = 923.
  EXPECT_EQ(m.total_params(), 551 + 923 + 168);
  EXPECT_EQ(m.active_params(), 551 + (151 + 16 + 32 + 4 + 288 + 144) + 168);
  // The latent (3) and rope key (1) per layer, 2 bytes each.
  EXPECT_EQ(m.kv_bytes_per_token(DType::BF16), 2 * (3 + 1) * 2);
  // MTP: enorm + hnorm 16, eh_proj 2x8x8, one MoE layer 923, head norm 8, embedding and head 160.
  EXPECT_EQ(m.mtp_params(), 16 + 128 + 923 + 8 + 160);
  // Absorbed decode: 2 x layers x heads x (2 x 3 + 1) per context token; expanded: 2 x 2 x 2 x (2 + 1 + 2).
  EXPECT_DOUBLE_EQ(m.attention_flops_per_token(10, true), 560.0);
  EXPECT_DOUBLE_EQ(m.attention_flops_per_token(10, false), 400.0);
  // No q_lora_rank (DeepSeek-V2-Lite): q_proj 8 x 2 x 3 = 48 instead of 32 + 4 + 24.
  auto lite = kDeepseek;
  lite.replace(lite.find("\"q_lora_rank\": 4"), 16, "\"q_lora_rank\": null");
  EXPECT_EQ(parse(lite).attention_params_per_layer(), 151 - 60 + 48);
}

TEST(ModelArch, Glm4MoeBiasesNormsAndRouterBias) {
  const auto m = parse(R"({"architectures": ["Glm4MoeForCausalLM"], "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4, "attention_bias": true, "use_qk_norm": true,
    "partial_rotary_factor": 0.5, "intermediate_size": 16, "moe_intermediate_size": 6, "n_routed_experts": 4,
    "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "num_nextn_predict_layers": 1})");
  // Attention 384 + q/k/v biases 32 + q/k norms 8 = 424. Layer 0: 424 + 16 + 384 = 824.
  // Layer 1: 424 + 16 + router 32 + bias 4 + experts 576 + shared 144 = 1196 (active: 288 of experts).
  EXPECT_EQ(m.total_params(), 824 + 1196 + 168);
  EXPECT_EQ(m.active_params(), 824 + 908 + 168);
}

TEST(ModelArch, DistinctExpertsFollowUniformRouting) {
  const auto m = resolve_model("qwen3-30b-a3b");
  EXPECT_DOUBLE_EQ(m.expected_distinct_experts(0), 0.0);
  EXPECT_NEAR(m.expected_distinct_experts(1), 8.0, 1e-9);  // one token reads its k experts
  EXPECT_NEAR(m.expected_distinct_experts(16), 128.0 * (1 - std::pow(120.0 / 128.0, 16)), 1e-9);
  EXPECT_GT(m.expected_distinct_experts(1024), 127.99);
  // A one-token decode reads the active weights, a large batch nearly all.
  EXPECT_NEAR(m.weights_read_bytes(1, DType::BF16), 2.0 * static_cast<double>(m.active_params()), 1e-3 * 2.0 * 3.35e9);
  EXPECT_NEAR(m.weights_read_bytes(4096, DType::BF16), m.weight_bytes(DType::BF16), 1e-6 * m.weight_bytes(DType::BF16));
}

TEST(ModelArch, BuiltinModelsMatchPublishedSizes) {
  ASSERT_EQ(builtin_model_config_texts().size(), builtin_model_table().size());
  for (const auto& b : builtin_model_table()) {
    SCOPED_TRACE(b.name);
    const auto m = resolve_model(b.name);
    EXPECT_NEAR(static_cast<double>(m.total_params()), b.published_total_params, 0.01 * b.published_total_params);
    EXPECT_NEAR(static_cast<double>(m.active_params()), b.published_active_params, 0.01 * b.published_active_params);
  }
}

TEST(ModelArch, PinnedCountsOfTheShippedConfigs) {
  // Worked by hand: Qwen3-4B layer 100,930,816 x 36 + embedding 388,956,160 + norm 2,560.
  EXPECT_EQ(resolve_model("qwen3-4b").total_params(), 4022468096);
  EXPECT_EQ(resolve_model("qwen3-4b").kv_bytes_per_token(DType::BF16), 147456);
  const auto moe = resolve_model("qwen3-30b-a3b");
  EXPECT_EQ(moe.total_params(), 30532122624);
  EXPECT_EQ(moe.active_params(), 3353032704);
  const auto v3 = resolve_model("deepseek-v3");
  EXPECT_EQ(v3.total_params(), 671026419200);
  EXPECT_EQ(v3.active_params(), 37552297472);
  EXPECT_EQ(v3.kv_bytes_per_token(DType::BF16), 70272);
  // With its multi-token-prediction module: the 685B of the model card.
  EXPECT_NEAR(static_cast<double>(v3.total_params() + v3.mtp_params()), 685e9, 0.01 * 685e9);
}

TEST(ModelArch, BadConfigsAreRefusedByField) {
  {
    const auto e = refusal(R"({"architectures": ["GPT2LMHeadModel"], "vocab_size": 10})");
    EXPECT_NE(e.find("architectures"), std::string::npos) << e;
    EXPECT_NE(e.find("GPT2LMHeadModel"), std::string::npos) << e;
  }
  auto without = [](std::string text, const std::string& key) {
    const auto at = text.find("\"" + key + "\"");
    const auto comma = text.find(',', at);
    if (comma != std::string::npos) return text.erase(at, comma - at + 1);
    const auto before = text.rfind(',', at);  // the last field: drop the comma before it
    return text.erase(before, text.find('}', at) - before);
  };
  for (const std::string key : {"hidden_size", "vocab_size", "num_hidden_layers", "intermediate_size", "num_attention_heads"}) {
    const auto e = refusal(without(kLlama, key));
    EXPECT_NE(e.find("field '" + key + "' is missing"), std::string::npos) << e;
  }
  auto with = [](std::string text, const std::string& from, const std::string& to) {
    return text.replace(text.find(from), from.size(), to);
  };
  const auto zero_heads = refusal(with(kLlama, "\"num_attention_heads\": 4", "\"num_attention_heads\": 0"));
  EXPECT_NE(zero_heads.find("tiny.json:2: field 'num_attention_heads'"), std::string::npos) << zero_heads;
  const auto kv = refusal(with(kLlama, "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"));
  EXPECT_NE(kv.find("field 'num_key_value_heads': 3 does not divide num_attention_heads 4"), std::string::npos) << kv;
  const auto hd = refusal(with(kLlama, "\"hidden_size\": 8", "\"hidden_size\": 9"));
  EXPECT_NE(hd.find("num_attention_heads"), std::string::npos) << hd;
  const auto sw = refusal(with(kLlama, "LlamaForCausalLM", "MistralForCausalLM\"], \"sliding_window\": 4096, \"x\": [\"y"));
  EXPECT_NE(sw.find("sliding_window"), std::string::npos) << sw;
  const auto topk = refusal(with(kDeepseek, "\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 5"));
  EXPECT_NE(topk.find("num_experts_per_tok"), std::string::npos) << topk;
  const auto quant = refusal(with(kQwen3, "\"head_dim\": 4", "\"head_dim\": 4, \"quantization_config\": {\"quant_method\": \"awq\"}"));
  EXPECT_NE(quant.find("quantization_config"), std::string::npos) << quant;
  const auto type = refusal(with(kQwen3, "\"head_dim\": 4", "\"head_dim\": \"4\""));
  EXPECT_NE(type.find("field 'head_dim': expected an integer"), std::string::npos) << type;
  const auto json = refusal("{\"architectures\": [\n\"Qwen3ForCausalLM\",,]}");
  EXPECT_NE(json.find("tiny.json:2: invalid JSON"), std::string::npos) << json;
}

TEST(ModelArch, Fp8CheckpointsAreRead) {
  auto text = kQwen3;
  text.insert(1, R"("quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}, )");
  EXPECT_EQ(parse(text).checkpoint_dtype, DType::FP8);
}

TEST(ModelCatalog, UnknownNamesListTheBuiltins) {
  try {
    (void)resolve_model("qwen9-1t");
    FAIL() << "accepted an unknown model";
  } catch (const base::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("qwen9-1t"), std::string::npos);
    EXPECT_NE(what.find("deepseek-v3"), std::string::npos);
  }
}

}  // namespace
}  // namespace april::sim
