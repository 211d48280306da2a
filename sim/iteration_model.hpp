#pragma once
// How long one continuous-batching iteration takes. The fast-forward path asks
// for the total of a window of identical decode iterations (batch fixed, KV
// growing by `batch` tokens per iteration); each model answers in closed form,
// in integers, so that the total equals the sum of single iterations exactly.
#include <cstdint>
#include <memory>
#include <string>

#include "sim/hardware.hpp"
#include "sim/model_arch.hpp"

namespace april::sim {

// What one iteration does: `batch` running requests each gain a token; of
// them, `prefill_requests` were admitted at this boundary and are prefilled in
// it (their first token comes from the prefill), `prefill_tok` context tokens
// in all, the longest `prefill_longest_tok`; the rest decode.
struct IterationShape {
  std::int64_t batch = 0;
  std::int64_t resident_kv_tok = 0;  // in the KV cache at the start, admitted contexts included
  std::int64_t prefill_requests = 0;
  std::int64_t prefill_tok = 0;
  std::int64_t prefill_longest_tok = 0;
  [[nodiscard]] std::int64_t decode_batch() const { return batch - prefill_requests; }
};

// A decode-only iteration: `batch` requests, `resident_kv_tok` in the cache.
inline IterationShape decode_shape(std::int64_t batch, std::int64_t resident_kv_tok) { return {batch, resident_kv_tok, 0, 0, 0}; }

class IterationModel {
 public:
  virtual ~IterationModel() = default;
  [[nodiscard]] virtual std::int64_t iteration_ns(const IterationShape& shape) const = 0;
  // Shorthand for a prefill of `prefill_tok` tokens by one request among `batch` (or a decode when 0).
  [[nodiscard]] std::int64_t iteration_ns(std::int64_t batch, std::int64_t resident_kv_tok, std::int64_t prefill_tok) const {
    return iteration_ns(prefill_tok > 0 ? IterationShape{batch, resident_kv_tok, 1, prefill_tok, prefill_tok}
                                        : decode_shape(batch, resident_kv_tok));
  }
  // Sum of iteration_ns(decode_shape(batch, kv0_tok + j * batch)) for j in [0, iterations).
  [[nodiscard]] virtual std::int64_t decode_window_ns(std::int64_t batch, std::int64_t kv0_tok, std::int64_t iterations) const;
  [[nodiscard]] virtual std::string describe() const = 0;
};

// A fixed time per iteration, whatever the batch: for checks by hand.
class ConstantIterationModel final : public IterationModel {
 public:
  explicit ConstantIterationModel(std::int64_t iteration_ns) : iteration_ns_(iteration_ns) {}
  using IterationModel::iteration_ns;
  [[nodiscard]] std::int64_t iteration_ns(const IterationShape&) const override { return iteration_ns_; }
  [[nodiscard]] std::int64_t decode_window_ns(std::int64_t, std::int64_t, std::int64_t iterations) const override {
    return iteration_ns_ * iterations;
  }
  [[nodiscard]] std::string describe() const override;

 private:
  std::int64_t iteration_ns_;
};

struct RooflineParams {
  double compute_efficiency = 0.6;  // achieved fraction of peak FLOP/s
  double hbm_efficiency = 0.8;      // achieved fraction of HBM bandwidth
  std::int64_t overhead_ns = 0;     // scheduler, sampling and launch cost per iteration
  std::int64_t tensor_parallel = 1;
  std::int64_t expert_parallel = 1;  // GPUs of the engine the routed experts are spread over (divides tensor_parallel)
  DType weight_dtype = DType::BF16;  // FP8 halves the weight bytes and runs matmuls at the FP8 peak
  DType kv_dtype = DType::BF16;
  bool dp_attention = false;               // each GPU caches and attends its own requests (EngineLayout::dp_attention)
  double link_efficiency = 0.77;           // achieved fraction of the scale-up link in collectives
  std::int64_t collective_latency_ns = 0;  // fixed cost of each all-reduce / all-to-all per ring step (tp - 1 of them)
  // compute_efficiency for the routed experts' grouped GEMMs, whose
  // per-expert batches are small and uneven; 0: compute_efficiency.
  double moe_compute_efficiency = 0;
  // The routed experts' weights are read at this share of the dense weights'
  // bandwidth: a factor fitted on SGLang's and vLLM's MoE serving rows (their
  // fused-MoE kernels, each touched expert streamed for a few rows of tokens,
  // is the likely cause; no source measures it).
  double moe_hbm_share = 1.0;
};

// One continuous-batching iteration of an engine of `tensor_parallel` GPUs,
// per GPU (every GPU of the engine works on its shard at once):
//   compute = (linear FLOPs x tokens + attention FLOPs over the cached context
//              + prefill attention) / (tp x peak x compute_eff)
//   memory  = (weights the batch reads + KV cache) / (hbm x hbm_eff), per GPU:
//             weights over tp, GQA KV heads over tp, an MLA latent whole on each GPU;
//             the routed experts' weights at moe_hbm_share of that rate
//   comm    = TP all-reduces (one after attention, one after each dense MLP or
//             MoE layer without expert parallelism) and EP all-to-alls
//             (dispatch and combine per MoE layer) over the scale-up link
//   time    = overhead + max(compute, memory) + comm
// An MoE layer reads the distinct experts its tokens touch (ModelArch::
// expected_distinct_experts), not all experts and not k per token.
// Integer femtoseconds so that a decode window sums in closed form exactly.
class RooflineIterationModel final : public IterationModel {
 public:
  RooflineIterationModel(const Accelerator& hw, const ModelArch& model, const RooflineParams& p);
  using IterationModel::iteration_ns;
  [[nodiscard]] std::int64_t iteration_ns(const IterationShape& shape) const override;
  [[nodiscard]] std::int64_t decode_window_ns(std::int64_t batch, std::int64_t kv0_tok, std::int64_t iterations) const override;
  [[nodiscard]] std::string describe() const override;

  [[nodiscard]] std::int64_t weights_read_ns(std::int64_t tokens) const;
  [[nodiscard]] std::int64_t kv_read_fs_per_tok() const { return kv_fs_per_tok_; }
  [[nodiscard]] std::int64_t comm_ns(std::int64_t tokens) const;

 private:
  [[nodiscard]] std::int64_t compute_fs(std::int64_t tokens, std::int64_t kv_tok, std::int64_t prefill_attention_tok) const;
  [[nodiscard]] std::int64_t memory_fs(std::int64_t tokens, std::int64_t kv_tok) const;
  // An MoE layer stack's weight read, `experts` of its routed experts touched in each layer.
  [[nodiscard]] double moe_weights_read_ns(double experts) const;

  std::string name_;
  double weight_bytes_s_ = 0;  // per GPU, achieved
  double expert_bytes_s_ = 0;  // the routed experts', per GPU, achieved
  // An MoE model's weights, split once (weights_read_ns is on the per-iteration
  // path): all but the routed experts, and one routed expert in every MoE layer.
  double non_routed_bytes_ = 0, expert_bytes_all_layers_ = 0;
  double routed_experts_ = 0, experts_per_token_ = 0;
  std::int64_t tp_ = 1;
  std::int64_t dense_weights_ns_ = 0;   // all the weights (an MoE model's every expert, at its share), whatever the batch
  std::int64_t linear_fs_per_tok_ = 0;  // linear layers per token
  std::int64_t attn_fs_per_ctx_ = 0;    // decode attention per cached token
  std::int64_t prefill_attn_fs_per_ctx_ = 0;
  std::int64_t kv_fs_per_tok_ = 0;    // KV read time per resident token
  std::int64_t comm_fixed_ns_ = 0;    // latency of the iteration's collectives
  std::int64_t comm_fs_per_tok_ = 0;  // their bytes per token over the link
  std::int64_t overhead_ns_ = 0;
};

// Fitted to a live engine by `april calibrate`. An iteration runs a decode
// pass when any running request decodes and a prefill pass when any was
// admitted; each pass has its own fixed cost:
//     [decode_batch > 0]     (base + per_request * decode_batch + per_kv_tok * resident_kv_tok)
//   + [prefill_requests > 0] (prefill_base + per_prefill_request * prefill_requests
//                             + per_prefill_tok * prefill_tok
//                             + per_padded_prefill_tok * prefill_requests * prefill_longest_tok)
// The per-request term is what each admission costs whatever its length (its
// per-sequence attention, cache rows, first-token sampling); the padded term is what an engine
// pays that pads a batched prefill to its longest context (ours does; SGLang
// and vLLM pack, and fit it near 0).
// Integer nanoseconds and picoseconds, so a decode window sums in closed form.
struct LinearIterationParams {
  std::int64_t base_ns = 0;
  std::int64_t per_request_ns = 0;
  std::int64_t per_kv_tok_ps = 0;
  std::int64_t prefill_base_ns = 0;
  std::int64_t per_prefill_request_ns = 0;
  std::int64_t per_prefill_tok_ns = 0;
  std::int64_t per_padded_prefill_tok_ns = 0;
};

class LinearIterationModel final : public IterationModel {
 public:
  explicit LinearIterationModel(const LinearIterationParams& p) : p_(p) {}
  using IterationModel::iteration_ns;
  [[nodiscard]] std::int64_t iteration_ns(const IterationShape& shape) const override;
  [[nodiscard]] std::int64_t decode_window_ns(std::int64_t batch, std::int64_t kv0_tok, std::int64_t iterations) const override;
  [[nodiscard]] std::string describe() const override;

 private:
  LinearIterationParams p_;
};

// Sum over i in [0, n) of floor((a * i + b) / m), for a, b >= 0, m > 0.
std::int64_t floor_sum(std::int64_t n, std::int64_t m, std::int64_t a, std::int64_t b);

}  // namespace april::sim
