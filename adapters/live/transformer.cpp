#include "adapters/live/detail/transformer.hpp"

#include <cmath>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace april::live {

using torch::indexing::Slice;

namespace {

// Llama's rotate-half convention: pairs are (i, i + head_dim / 2).
torch::Tensor rotate_half(const torch::Tensor& x) {
  const auto half = x.size(-1) / 2;
  return torch::cat({-x.index({"...", Slice(half, torch::indexing::None)}), x.index({"...", Slice(0, half)})}, -1);
}

torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  return x * cos + rotate_half(x) * sin;
}

// Rotary angles [max_seq, head_dim / 2]. April's own models take them in
// float64. A Hugging Face model takes them as transformers computes them, in
// float32 throughout (inv_freq = 1 / theta^(2i / d), then position x
// inv_freq), so that a checkpoint's logits match its reference to float32
// rounding; with Llama 3's scaling applied to inv_freq as its config says.
torch::Tensor rope_angles(const ModelConfig& c) {
  const auto hd = c.head_dim();
  if (c.architecture.empty()) {
    const auto inv_freq = torch::pow(c.rope_theta, -torch::arange(0, hd, 2, torch::kFloat64) / static_cast<double>(hd));
    return torch::outer(torch::arange(c.max_seq, torch::kFloat64), inv_freq);
  }
  auto inv_freq = 1.0 / torch::pow(c.rope_theta, torch::arange(0, hd, 2, torch::kInt64).to(torch::kFloat32) / static_cast<double>(hd));
  if (c.llama3_rope) {
    const auto& r = *c.llama3_rope;
    const double old_len = static_cast<double>(r.original_max_pos);
    const double low_freq_wavelen = old_len / r.low_freq_factor;
    const double high_freq_wavelen = old_len / r.high_freq_factor;
    const auto wavelen = 2 * M_PI / inv_freq;
    auto scaled = torch::where(wavelen > low_freq_wavelen, inv_freq / r.factor, inv_freq);
    const auto smooth = (old_len / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
    const auto smoothed = (1 - smooth) * scaled / r.factor + smooth * scaled;
    const auto medium = (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
    inv_freq = torch::where(medium, smoothed, scaled);
  }
  return torch::outer(torch::arange(c.max_seq, torch::kInt64).to(torch::kFloat32), inv_freq);
}

}  // namespace

RMSNormImpl::RMSNormImpl(std::int64_t dim, double eps) : eps_(eps) { weight_ = register_parameter("weight", torch::ones({dim})); }

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps_) * weight_;
}

BlockImpl::BlockImpl(const ModelConfig& c) : n_heads_(c.n_heads), n_kv_heads_(c.n_kv_heads), head_dim_(c.head_dim()) {
  using torch::nn::LinearOptions;
  norm1_ = register_module("norm1", RMSNorm(c.d_model, c.norm_eps));
  norm2_ = register_module("norm2", RMSNorm(c.d_model, c.norm_eps));
  wq_ = register_module("wq", torch::nn::Linear(LinearOptions(c.d_model, n_heads_ * head_dim_).bias(c.qkv_bias)));
  wk_ = register_module("wk", torch::nn::Linear(LinearOptions(c.d_model, n_kv_heads_ * head_dim_).bias(c.qkv_bias)));
  wv_ = register_module("wv", torch::nn::Linear(LinearOptions(c.d_model, n_kv_heads_ * head_dim_).bias(c.qkv_bias)));
  if (c.qk_norm) {
    q_norm_ = register_module("q_norm", RMSNorm(head_dim_, c.norm_eps));
    k_norm_ = register_module("k_norm", RMSNorm(head_dim_, c.norm_eps));
  }
  wo_ = register_module("wo", torch::nn::Linear(LinearOptions(n_heads_ * head_dim_, c.d_model).bias(false)));
  w_gate_ = register_module("w_gate", torch::nn::Linear(LinearOptions(c.d_model, c.d_ff).bias(false)));
  w_up_ = register_module("w_up", torch::nn::Linear(LinearOptions(c.d_model, c.d_ff).bias(false)));
  w_down_ = register_module("w_down", torch::nn::Linear(LinearOptions(c.d_ff, c.d_model).bias(false)));
}

torch::Tensor BlockImpl::attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask) const {
  // Grouped-query attention: each KV head serves n_heads / n_kv_heads query heads.
  const auto rep = n_heads_ / n_kv_heads_;
  // Head h reads KV head h / rep. Expand + reshape is repeat_interleave's copy
  // without its output-size computation, which may wait for the device (and
  // a CUDA graph capture allows no such wait).
  const auto widen = [rep](const torch::Tensor& t) {
    const auto sz = t.sizes();
    return t.unsqueeze(2).expand({sz[0], sz[1], rep, sz[2], sz[3]}).reshape({sz[0], sz[1] * rep, sz[2], sz[3]});
  };
  return scaled_attention(q, rep == 1 ? k : widen(k), rep == 1 ? v : widen(v), mask, fast_attention_);
}

torch::Tensor BlockImpl::attend_grouped(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                        const torch::Tensor& mask) const {
  return scaled_attention(q, k, v, mask, fast_attention_ || fast_decode_attention_);
}

torch::Tensor BlockImpl::scaled_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask,
                                          [[maybe_unused]] bool fused) const {
#if TORCH_VERSION_MAJOR >= 2
  if (fused) return at::scaled_dot_product_attention(q, k, v, mask);
#endif
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim_));
  scores = scores + mask;
  return torch::matmul(torch::softmax(scores, -1), v);
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, const torch::Tensor& mask,
                                 torch::Tensor* cache_k, torch::Tensor* cache_v, const torch::Tensor& slots) {
  const auto b = x.size(0), t = x.size(1);
  const auto h = norm1_(x);
  auto q = norm_q(wq_(h).view({b, t, n_heads_, head_dim_})).transpose(1, 2);
  auto k = norm_k(wk_(h).view({b, t, n_kv_heads_, head_dim_})).transpose(1, 2);
  auto v = wv_(h).view({b, t, n_kv_heads_, head_dim_}).transpose(1, 2);
  q = apply_rope(q, cos, sin);
  k = apply_rope(k, cos, sin);
  if (cache_k != nullptr) {
    // Padding positions get K/V too; decoding overwrites them before they are visible.
    cache_k->index_put_({slots, Slice(), Slice(0, t)}, k);
    cache_v->index_put_({slots, Slice(), Slice(0, t)}, v);
  }
  const auto a = attend(q, k, v, mask).transpose(1, 2).reshape({b, t, n_heads_ * head_dim_});
  const auto x2 = x + wo_(a);
  const auto h2 = norm2_(x2);
  return x2 + w_down_(torch::silu(w_gate_(h2)) * w_up_(h2));
}

torch::Tensor BlockImpl::decode(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, torch::Tensor& cache_k,
                                torch::Tensor& cache_v, const torch::Tensor& pos, const torch::Tensor& key_mask) {
  const auto s = x.size(0);
  const auto h = norm1_(x);
  auto q = norm_q(wq_(h).view({s, 1, n_heads_, head_dim_})).transpose(1, 2);  // [S, H, 1, hd]
  auto k = norm_k(wk_(h).view({s, 1, n_kv_heads_, head_dim_})).transpose(1, 2);
  auto v = wv_(h).view({s, 1, n_kv_heads_, head_dim_}).transpose(1, 2);
  const auto c4 = cos.view({s, 1, 1, head_dim_});
  const auto s4 = sin.view({s, 1, 1, head_dim_});
  q = apply_rope(q, c4, s4);
  k = apply_rope(k, c4, s4);
  const auto rows = torch::arange(s, torch::TensorOptions().dtype(torch::kLong).device(x.device()));
  cache_k.index_put_({rows, Slice(), pos}, k.squeeze(2));
  cache_v.index_put_({rows, Slice(), pos}, v.squeeze(2));
  // Grouped-query decode without widening the cache: the rep query heads of
  // one KV head become rep query rows against that head's keys ([S, Hkv, rep,
  // hd]); head h = kv * rep + r, as in attend(). The whole cache is read once,
  // not copied rep times per layer.
  const auto rep = n_heads_ / n_kv_heads_;
  const auto qg = q.reshape({s, n_kv_heads_, rep, head_dim_});
  const auto a = attend_grouped(qg, cache_k, cache_v, key_mask).reshape({s, 1, n_heads_ * head_dim_});
  const auto x2 = x + wo_(a);
  const auto h2 = norm2_(x2);
  return x2 + w_down_(torch::silu(w_gate_(h2)) * w_up_(h2));
}

TransformerImpl::TransformerImpl(const ModelConfig& c, torch::ScalarType dtype) : config_(c) {
  if ((c.explicit_head_dim == 0 && c.d_model % c.n_heads != 0) || c.n_heads % c.n_kv_heads != 0 || c.head_dim() % 2 != 0) {
    throw std::invalid_argument("model config: the head width must be even, n_heads a multiple of n_kv_heads");
  }
  const bool f32 = dtype == torch::kFloat32;
  embed_ = register_module(
      "embed", f32 ? torch::nn::Embedding(c.vocab, c.d_model)
                   : torch::nn::Embedding(torch::nn::EmbeddingOptions(c.vocab, c.d_model)
                                              ._weight(torch::empty({c.vocab, c.d_model}, torch::TensorOptions().dtype(dtype)).normal_())));
  for (std::int64_t i = 0; i < c.n_layers; ++i) {
    Block b(c);
    if (!f32) {
      b->to(dtype);
#if defined(__GLIBC__)
      // The layer's float32 first values, given back now: kept in the heap,
      // they left a bf16 Qwen3-0.6B at 1.84 GB of RSS for 1.19 GB of weights.
      malloc_trim(0);
#endif
    }
    blocks_.push_back(register_module("block" + std::to_string(i), b));
  }
  norm_ = register_module("norm", RMSNorm(c.d_model, c.norm_eps));
  if (!c.tie_embeddings) {
    lm_head_ = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(c.d_model, c.vocab).bias(false)));
  }
  if (!f32) {
    norm_->to(dtype);
    if (lm_head_) lm_head_->to(dtype);
  }
  const auto angles = rope_angles(c);  // [max_seq, hd/2]
  const auto full = torch::cat({angles, angles}, -1);
  cos_ = register_buffer("rope_cos", full.cos().to(torch::kFloat32));
  sin_ = register_buffer("rope_sin", full.sin().to(torch::kFloat32));
}

torch::Tensor TransformerImpl::head(const torch::Tensor& x) {
  return lm_head_ ? lm_head_(x) : torch::nn::functional::linear(x, embed_->weight);
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& tokens) {
  const auto t = tokens.size(1);
  if (t > config_.max_seq) throw std::invalid_argument("sequence longer than the model's max_seq");
  auto x = embed_(tokens);
  const auto cos = cos_.index({Slice(0, t)});
  const auto sin = sin_.index({Slice(0, t)});
  const auto mask = torch::full({t, t}, -std::numeric_limits<float>::infinity(), x.options()).triu(1);
  for (auto& b : blocks_) x = b->forward(x, cos, sin, mask);
  return head(norm_(x));
}

torch::Tensor TransformerImpl::prefill(const torch::Tensor& tokens, const torch::Tensor& lengths, const torch::Tensor& slots,
                                       KvCache& cache) {
  const auto t = tokens.size(1);
  auto x = embed_(tokens);
  const auto cos = cos_.index({Slice(0, t)});
  const auto sin = sin_.index({Slice(0, t)});
  const auto mask = torch::full({t, t}, -std::numeric_limits<float>::infinity(), x.options()).triu(1);
  for (std::size_t i = 0; i < blocks_.size(); ++i) x = blocks_[i]->forward(x, cos, sin, mask, &cache.k[i], &cache.v[i], slots);
  const auto last = (lengths - 1).view({-1, 1, 1}).expand({x.size(0), 1, x.size(2)});
  return head(norm_(x.gather(1, last).squeeze(1)));
}

torch::Tensor TransformerImpl::decode(const torch::Tensor& tokens, const torch::Tensor& pos, KvCache& cache) {
  auto x = embed_(tokens.unsqueeze(1));  // [S, 1, D]
  const auto cos = cos_.index({pos});    // [S, hd]
  const auto sin = sin_.index({pos});
  // Keys at positions <= pos are visible.
  const auto key_pos = torch::arange(config_.max_seq, pos.options());
  const auto visible = key_pos.unsqueeze(0) <= pos.unsqueeze(1);  // [S, max_seq]
  const auto key_mask = torch::zeros({pos.size(0), config_.max_seq}, x.options())
                            .masked_fill(visible.logical_not(), -std::numeric_limits<float>::infinity())
                            .view({pos.size(0), 1, 1, config_.max_seq});
  for (std::size_t i = 0; i < blocks_.size(); ++i) x = blocks_[i]->decode(x, cos, sin, cache.k[i], cache.v[i], pos, key_mask);
  return head(norm_(x)).squeeze(1);
}

KvCache TransformerImpl::make_cache(std::int64_t slots, const torch::Device& device, torch::ScalarType dtype) const {
  KvCache c;
  const auto opts = torch::TensorOptions().dtype(dtype).device(device);
  for (std::int64_t i = 0; i < config_.n_layers; ++i) {
    c.k.push_back(torch::zeros({slots, config_.n_kv_heads, config_.max_seq, config_.head_dim()}, opts));
    c.v.push_back(torch::zeros({slots, config_.n_kv_heads, config_.max_seq, config_.head_dim()}, opts));
  }
  return c;
}

void TransformerImpl::set_fast_attention(bool on) {
  if (on && !fast_attention_available()) {
    throw std::invalid_argument("the fused attention path needs libtorch >= 2 (this one is " + std::string(TORCH_VERSION) + ")");
  }
  for (auto& b : blocks_) b->set_fast_attention(on);
}

void TransformerImpl::set_fast_decode_attention(bool on) {
  if (on && !fast_attention_available()) {
    throw std::invalid_argument("the fused attention path needs libtorch >= 2 (this one is " + std::string(TORCH_VERSION) + ")");
  }
  for (auto& b : blocks_) b->set_fast_decode_attention(on);
}

void copy_weights(Transformer& from, Transformer& to) {
  torch::NoGradGuard no_grad;
  auto src = from->named_parameters();
  for (auto& p : to->named_parameters()) p.value().copy_(src[p.key()]);
  auto srcb = from->named_buffers();
  for (auto& b : to->named_buffers()) b.value().copy_(srcb[b.key()]);
}

}  // namespace april::live
