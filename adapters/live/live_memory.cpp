#include "adapters/live/live_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace april::live {
namespace {

constexpr double kF32 = 4;
// AdamW in float32: the weights, their gradients and two moments.
constexpr double kTrainerBytesPerParam = 4 * kF32;
// libtorch's own resident memory (its libraries, allocator pools, thread
// pools): ~0.3 GiB peak RSS for the tiny model on CPU, rounded up.
constexpr double kRuntimeBytes = 0.5 * 1024 * 1024 * 1024;

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace

double train_activation_bytes(const ModelConfig& m, std::int64_t samples, std::int64_t tokens) {
  if (samples <= 0 || tokens <= 0) return 0;
  const double tok = static_cast<double>(samples) * static_cast<double>(tokens);
  const double d = static_cast<double>(m.d_model), f = static_cast<double>(m.d_ff);
  const double kv = static_cast<double>(m.n_kv_heads * m.head_dim()), h = static_cast<double>(m.n_heads);
  const double t = static_cast<double>(tokens);
  // What autograd keeps per token and layer for the backward, in floats
  // (transformer.cpp's Block::forward): the two RMSNorms' inputs, products
  // and outputs (~6 d), q with its rotated half and rotary output (3 d), k
  // likewise (3 kv), v (kv), k and v widened to every query head (2 d), the
  // attention output and its reshaped copy (2 d), the residual sum (d), the
  // SwiGLU's gate, its SiLU, up and product (4 f), and the softmax of the
  // scores, one row of t keys per head (h t).
  const double saved_per_layer = tok * (14 * d + 4 * kv + 4 * f + h * t);
  // The transient peak of one layer: the scores' matmul, scaled and masked
  // copies beside the softmax (3 h t), in the forward and again in the backward.
  const double transient = tok * 3 * h * t;
  // The head (grpo.cpp's response_logprobs): logits, tempered logits,
  // log-softmax and the gathered expansion, each t x vocab; and their gradients.
  const double head = tok * 6 * static_cast<double>(m.vocab);
  return kF32 * (static_cast<double>(m.n_layers) * saved_per_layer + transient + head);
}

LiveMemoryEstimate estimate_live_memory(const LiveMemoryInputs& in) {
  const ModelConfig& m = in.model;
  const double params = static_cast<double>(m.parameters());
  const double engine_b = in.engine_bf16 ? 2 : kF32;
  LiveMemoryEstimate e;
  e.weights_bytes = params * (kTrainerBytesPerParam + engine_b + (in.reference_model ? kF32 : 0));
  // transformer.cpp's make_cache: K and V per layer, [slots, kv heads, max_seq, head_dim].
  const double cache_elems = 2.0 * static_cast<double>(m.n_layers) * static_cast<double>(in.slots) * static_cast<double>(m.n_kv_heads) *
                             static_cast<double>(m.max_seq) * static_cast<double>(m.head_dim());
  e.kv_cache_bytes = cache_elems * engine_b;
  // Transformer::decode: the key mask [slots, max_seq] and, per layer in turn,
  // scores, masked scores and softmax [slots, heads, max_seq].
  e.decode_bytes = kF32 * static_cast<double>(in.slots) * static_cast<double>(m.max_seq) * (1 + 3 * static_cast<double>(m.n_heads));
  e.activation_bytes =
      std::max(train_activation_bytes(m, in.train_samples, in.train_tokens), train_activation_bytes(m, in.sft_batch, in.sft_tokens));
  e.runtime_bytes = kRuntimeBytes;
  return e;
}

LiveMemoryInputs memory_inputs(const LiveOptions& o, const ModelConfig& model) {
  LiveMemoryInputs in;
  in.model = model;
  in.slots = o.slots;
  in.engine_bf16 = o.serving.bf16;
  in.reference_model = o.kl_coef > 0;
  return in;
}

LiveMemoryInputs run_memory_inputs(const LiveOptions& o, const ModelConfig& model, std::int64_t train_samples, std::int64_t max_prompt_tok,
                                   std::int64_t max_answer_tok, bool trained) {
  LiveMemoryInputs in = memory_inputs(o, model);
  const std::int64_t response = trained ? std::min<std::int64_t>(o.max_response_len, max_answer_tok) : o.max_response_len;
  in.train_samples = train_samples;
  in.train_tokens = max_prompt_tok + response;
  in.sft_batch = o.sft_steps > 0 ? o.sft_batch : 0;
  in.sft_tokens = max_prompt_tok + max_answer_tok;
  return in;
}

std::string LiveMemoryEstimate::breakdown() const {
  return fmt::format("weights and optimizer {} + KV cache {} + decode {} + training activations {} + libtorch {}", gib(weights_bytes),
                     gib(kv_cache_bytes), gib(decode_bytes), gib(activation_bytes), gib(runtime_bytes));
}

void check_live_memory(const LiveMemoryEstimate& e, std::uint64_t limit_bytes, const std::string& what) {
  if (limit_bytes == 0 || e.total() <= static_cast<double>(limit_bytes)) return;
  throw std::runtime_error(
      fmt::format("{} needs about {} of memory ({}), more than the {} this machine has; lower live.slots or max_response_len (the KV "
                  "cache is slots x their length), rollout_batch_size x n_samples_per_prompt (one train step's batch), or live.model",
                  what, gib(e.total()), e.breakdown(), gib(static_cast<double>(limit_bytes))));
}

}  // namespace april::live
