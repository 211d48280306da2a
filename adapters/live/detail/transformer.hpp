#pragma once
// The live backend's decoder-only transformer (Llama/Qwen family). Private to
// the live backend: this header includes torch, and nothing public includes it.
// Attention and RMSNorm are written by hand so that Debian's libtorch 1.13
// (no scaled_dot_product_attention, no RMSNorm module) builds it.
#include <torch/torch.h>
#include <torch/version.h>

#include <vector>

#include "adapters/live/model_config.hpp"

namespace april::live {

// Per-layer K and V caches, [slots, kv_heads, max_seq, head_dim].
struct KvCache {
  std::vector<torch::Tensor> k, v;
};

class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(std::int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor weight_;
  double eps_;
};
TORCH_MODULE(RMSNorm);

class BlockImpl : public torch::nn::Module {
 public:
  explicit BlockImpl(const ModelConfig& c);
  // x [B, T, D]; cos/sin [T, head_dim]; mask [T, T] additive (causal). When
  // `cache_k` is given, row b's K and V go to cache row slots[b].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, const torch::Tensor& mask,
                        torch::Tensor* cache_k = nullptr, torch::Tensor* cache_v = nullptr, const torch::Tensor& slots = {});
  // One token for every slot: x [S, 1, D]; cos/sin [S, head_dim] at each
  // row's position; writes K and V at (row, pos) and attends over the whole
  // cache length with `key_mask` [S, 1, 1, max_seq] (fixed shapes on purpose:
  // a row's numbers do not depend on the other rows or on how it got there).
  torch::Tensor decode(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, torch::Tensor& cache_k,
                       torch::Tensor& cache_v, const torch::Tensor& pos, const torch::Tensor& key_mask);
  void set_fast_attention(bool on) { fast_attention_ = on; }
  void set_fast_decode_attention(bool on) { fast_decode_attention_ = on; }

 private:
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask) const;
  // q [S, Hkv, rep, hd] against k, v [S, Hkv, T, hd]: no KV head is widened.
  torch::Tensor attend_grouped(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask) const;
  // softmax(q k^T / sqrt(hd) + mask) v, through torch 2.x's fused kernel when `fused`.
  torch::Tensor scaled_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask,
                                 bool fused) const;
  // Qwen3's per-head RMSNorm of q and k ([B, T, H, hd] -> same), before rotary.
  [[nodiscard]] torch::Tensor norm_q(const torch::Tensor& q) { return q_norm_ ? q_norm_(q) : q; }
  [[nodiscard]] torch::Tensor norm_k(const torch::Tensor& k) { return k_norm_ ? k_norm_(k) : k; }
  std::int64_t n_heads_, n_kv_heads_, head_dim_;
  bool fast_attention_ = false;         // forward and prefill (variable shapes)
  bool fast_decode_attention_ = false;  // decode (fixed shapes)
  RMSNorm norm1_{nullptr}, norm2_{nullptr};
  RMSNorm q_norm_{nullptr}, k_norm_{nullptr};  // only with ModelConfig::qk_norm
  torch::nn::Linear wq_{nullptr}, wk_{nullptr}, wv_{nullptr}, wo_{nullptr};
  torch::nn::Linear w_gate_{nullptr}, w_up_{nullptr}, w_down_{nullptr};
};
TORCH_MODULE(Block);

class TransformerImpl : public torch::nn::Module {
 public:
  // Parameters in `dtype`, each layer converted as it is made, so that a
  // bf16 model never exists whole in float32 (loading a checkpoint holds one
  // copy of it). The initial values are random either way.
  explicit TransformerImpl(const ModelConfig& c, torch::ScalarType dtype = torch::kFloat32);
  // tokens [B, T] (right-padded) -> logits [B, T, vocab].
  torch::Tensor forward(const torch::Tensor& tokens);
  // Batched prefill: right-padded sequences [A, T] with `lengths` [A] into
  // cache rows `slots` [A]; logits at each sequence's last position [A, vocab].
  torch::Tensor prefill(const torch::Tensor& tokens, const torch::Tensor& lengths, const torch::Tensor& slots, KvCache& cache);
  // One decode iteration over every slot: tokens [S], pos [S] -> logits [S, vocab].
  torch::Tensor decode(const torch::Tensor& tokens, const torch::Tensor& pos, KvCache& cache);
  KvCache make_cache(std::int64_t slots, const torch::Device& device, torch::ScalarType dtype = torch::kFloat32) const;
  // torch 2.x's fused scaled_dot_product_attention instead of the manual
  // attention; throws where libtorch has none (1.x).
  void set_fast_attention(bool on);
  // The fused path in decode only. On CUDA, torch's fused attention builds a
  // plan for every new shape (the cuDNN backend): the engine's fixed-shape
  // decode pays once, while prefill and training, whose shapes change with
  // every batch, paid it again and again (measured on an H100: a resumed
  // APRIL rollout 3.6x slower live than its twin with the fused path
  // everywhere, 1.2x with it nowhere).
  void set_fast_decode_attention(bool on);
  static bool fast_attention_available() { return TORCH_VERSION_MAJOR >= 2; }
  [[nodiscard]] const ModelConfig& config() const { return config_; }

 private:
  // The LM head: its own matrix, or the embedding's when tied (one tensor,
  // so the optimizer updates it once).
  [[nodiscard]] torch::Tensor head(const torch::Tensor& x);
  ModelConfig config_;
  torch::nn::Embedding embed_{nullptr};
  std::vector<Block> blocks_;
  RMSNorm norm_{nullptr};
  torch::nn::Linear lm_head_{nullptr};  // null when tied
  torch::Tensor cos_, sin_;             // [max_seq, head_dim]
};
TORCH_MODULE(Transformer);

// Copies every parameter and buffer of `from` into `to` (same config).
void copy_weights(Transformer& from, Transformer& to);

}  // namespace april::live
