#include "sim/iteration_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/engine_memory.hpp"

namespace april::sim {

__extension__ typedef __int128 Int128;

std::int64_t IterationModel::decode_window_ns(std::int64_t batch, std::int64_t kv0_tok, std::int64_t iterations) const {
  std::int64_t total = 0;
  for (std::int64_t j = 0; j < iterations; ++j) total += iteration_ns(decode_shape(batch, kv0_tok + j * batch));
  return total;
}

std::string ConstantIterationModel::describe() const { return fmt::format("constant {} ns per iteration", iteration_ns_); }

namespace {

// sum over i in [0, n) of floor((a i + b) / m), the classic Euclid-like
// reduction in the integer type U.
template <typename U>
U floor_sum_in(U n, U m, U a, U b) {
  U ans = 0;
  while (true) {
    if (a >= m) {
      ans += (n - 1) * n / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      ans += n * (b / m);
      b %= m;
    }
    const U y_max = a * n + b;
    if (y_max < m) break;
    n = y_max / m;
    b = y_max % m;
    std::swap(m, a);
  }
  return ans;
}

}  // namespace

std::int64_t floor_sum(std::int64_t n, std::int64_t m, std::int64_t a, std::int64_t b) {
  // With n and m below 2^32 every intermediate of the reduction stays below
  // 2^64 except the sums, which wrap modulo 2^64 in unsigned arithmetic; so
  // the result's low 64 bits are exact, as the 128-bit path's cast keeps
  // them. That path's divisions are library calls (__divmodti4), a few
  // percent of a large simulation.
  constexpr std::int64_t k32 = std::int64_t{1} << 32;
  if (n >= 0 && n < k32 && m >= 1 && m < k32 && a >= 0 && b >= 0) {
    using U = std::uint64_t;
    return static_cast<std::int64_t>(floor_sum_in<U>(static_cast<U>(n), static_cast<U>(m), static_cast<U>(a), static_cast<U>(b)));
  }
  return static_cast<std::int64_t>(floor_sum_in<Int128>(n, m, a, b));
}

RooflineIterationModel::RooflineIterationModel(const Accelerator& hw, const ModelArch& model, const RooflineParams& p)
    : name_(fmt::format("roofline {} on {} x{}{}", model.name, hw.name, p.tensor_parallel,
                        p.expert_parallel > 1 ? fmt::format(" (EP {})", p.expert_parallel) : "")),
      tp_(p.tensor_parallel),
      overhead_ns_(p.overhead_ns) {
  if (p.tensor_parallel < 1 || p.expert_parallel < 1 || p.tensor_parallel % p.expert_parallel != 0) {
    throw std::invalid_argument("tensor_parallel must be >= 1 and a multiple of expert_parallel");
  }
  const double tp = static_cast<double>(p.tensor_parallel);
  const bool fp8 = p.weight_dtype == DType::FP8;
  // Integer femtoseconds must stay far inside int64 over a step's sums: refuse
  // figures that would make a token cost more than a second, or the weights
  // more than 1000 s to read (a hardware file off by orders of magnitude).
  const auto bounded = [&](double value, double limit, const char* what) {
    if (!(value >= 0 && value <= limit)) {
      throw std::invalid_argument(
          fmt::format("{} on {}: {} of {:.3g} is beyond the model's range ({:.3g}); check the hardware "
                      "figures and efficiencies",
                      model.name, hw.name, what, value, limit));
    }
    return std::llround(value);
  };
  const double flop_s = tp * hw.peak_flop_s(fp8) * p.compute_efficiency;
  const double bytes_s = hw.hbm_bytes_s * p.hbm_efficiency;  // one GPU
  weight_bytes_s_ = tp * bytes_s;                            // its shard on every GPU at once
  if (!(p.moe_hbm_share > 0 && p.moe_hbm_share <= 2)) throw std::invalid_argument("moe_hbm_share must be in (0, 2]");
  expert_bytes_s_ = weight_bytes_s_ * p.moe_hbm_share;
  if (model.is_moe()) {
    const double bpe = bytes_per_element(p.weight_dtype), moe_layers = static_cast<double>(model.moe_layers());
    const double expert = static_cast<double>(model.expert_params());
    expert_bytes_all_layers_ = moe_layers * expert * bpe;
    routed_experts_ = static_cast<double>(model.routed_experts);
    experts_per_token_ = static_cast<double>(model.experts_per_token);
    non_routed_bytes_ = model.weight_bytes(p.weight_dtype) - routed_experts_ * expert_bytes_all_layers_;
  }
  dense_weights_ns_ =
      bounded(model.is_moe() ? moe_weights_read_ns(routed_experts_) : model.weight_bytes(p.weight_dtype) / weight_bytes_s_ * 1e9, 1e12,
              "weight read ns");
  // The routed experts' FLOPs (k experts of 3 matrices per token in every MoE
  // layer) at their own efficiency, the rest at the dense one.
  const double routed_flops = model.is_moe() ? 2.0 * static_cast<double>(model.experts_per_token) *
                                                   static_cast<double>(model.expert_params()) * static_cast<double>(model.moe_layers())
                                             : 0.0;
  const double moe_flop_s = p.moe_compute_efficiency > 0 ? tp * hw.peak_flop_s(fp8) * p.moe_compute_efficiency : flop_s;
  linear_fs_per_tok_ =
      bounded(((model.linear_flops_per_token() - routed_flops) / flop_s + routed_flops / moe_flop_s) * 1e15, 1e15, "fs per token");
  attn_fs_per_ctx_ = bounded(model.attention_flops_per_token(1, true) / flop_s * 1e15, 1e12, "fs per cached token");
  prefill_attn_fs_per_ctx_ = bounded(model.attention_flops_per_token(1, false) / flop_s * 1e15, 1e12, "fs per attention pair");
  // KV per GPU (engine_memory.hpp): GQA heads split over tp, an MLA latent
  // whole on every GPU, or each GPU its own requests' under DP attention.
  EngineLayout layout;
  layout.tensor_parallel = p.tensor_parallel;
  layout.kv_dtype = p.kv_dtype;
  layout.dp_attention = p.dp_attention;
  kv_fs_per_tok_ = bounded(kv_bytes_per_token_per_gpu(model, layout) / bytes_s * 1e15, 1e12, "fs per KV token");
  if (p.tensor_parallel > 1) {
    // Ring all-reduce: each GPU sends 2 (tp - 1) / tp of the bf16 activations.
    // Alltoall (EP): each token's hidden state goes to its k experts' GPUs and
    // back, (ep - 1) / ep of them remote.
    // An engine wider than the scale-up domain runs its rings through the NICs.
    const bool across_nodes = p.tensor_parallel > hw.scale_up_domain_gpus;
    const double link = (across_nodes ? hw.nic_bytes_s : hw.scale_up_bytes_s) * p.link_efficiency;
    const double act = static_cast<double>(model.hidden) * 2.0;
    const auto moe = model.moe_layers();
    const bool ep = p.expert_parallel > 1 && model.is_moe();
    const auto all_reduces = model.layers + (model.layers - (ep ? moe : 0));
    const auto all_to_alls = ep ? 2 * moe : 0;
    const double ep_share = ep ? static_cast<double>(p.expert_parallel - 1) / static_cast<double>(p.expert_parallel) : 0.0;
    const double bytes_per_tok = static_cast<double>(all_reduces) * act * 2.0 * (tp - 1.0) / tp +
                                 static_cast<double>(all_to_alls) * act * static_cast<double>(model.experts_per_token) * ep_share;
    comm_fs_per_tok_ = bounded(bytes_per_tok / link * 1e15, 1e15, "collective fs per token");
    // A ring collective takes tp - 1 steps each way, each a link latency.
    comm_fixed_ns_ = (all_reduces + all_to_alls) * p.collective_latency_ns * (p.tensor_parallel - 1);
  }
}

std::int64_t RooflineIterationModel::weights_read_ns(std::int64_t tokens) const {
  if (routed_experts_ == 0) return dense_weights_ns_;
  // ModelArch::weights_read_bytes, from the constants split in the constructor.
  return std::llround(moe_weights_read_ns(expected_distinct_experts(routed_experts_, experts_per_token_, tokens)));
}

double RooflineIterationModel::moe_weights_read_ns(double experts) const {
  return (non_routed_bytes_ / weight_bytes_s_ + experts * expert_bytes_all_layers_ / expert_bytes_s_) * 1e9;
}

std::int64_t RooflineIterationModel::comm_ns(std::int64_t tokens) const {
  if (tokens <= 0 || tp_ == 1) return 0;
  std::int64_t fs = 0;
  if (!__builtin_mul_overflow(tokens, comm_fs_per_tok_, &fs)) return comm_fixed_ns_ + fs / 1000000;  // as below, without __divti3
  return comm_fixed_ns_ + static_cast<std::int64_t>(static_cast<Int128>(tokens) * comm_fs_per_tok_ / 1000000);
}

std::int64_t RooflineIterationModel::compute_fs(std::int64_t tokens, std::int64_t kv_tok, std::int64_t prefill_attention_tok) const {
  return static_cast<std::int64_t>(static_cast<Int128>(tokens) * linear_fs_per_tok_ + static_cast<Int128>(kv_tok) * attn_fs_per_ctx_ +
                                   static_cast<Int128>(prefill_attention_tok) * prefill_attn_fs_per_ctx_);
}

std::int64_t RooflineIterationModel::memory_fs(std::int64_t tokens, std::int64_t kv_tok) const {
  return static_cast<std::int64_t>(static_cast<Int128>(weights_read_ns(tokens)) * 1000000 + static_cast<Int128>(kv_tok) * kv_fs_per_tok_);
}

std::int64_t RooflineIterationModel::iteration_ns(const IterationShape& s) const {
  // One fused pass (SGLang / vLLM style): prefill tokens ride with the batch.
  // A prefilled context attends to itself: about prefill_tok x longest / 2
  // query-key pairs (exact for one request).
  const std::int64_t tokens = s.batch + s.prefill_tok;
  const std::int64_t prefill_pairs = s.prefill_tok * s.prefill_longest_tok / 2;
  const std::int64_t decode_kv = s.resident_kv_tok - s.prefill_tok;
  const std::int64_t fs =
      std::max(compute_fs(tokens, std::max<std::int64_t>(decode_kv, 0), prefill_pairs), memory_fs(tokens, s.resident_kv_tok));
  return overhead_ns_ + fs / 1000000 + comm_ns(tokens);
}

std::int64_t RooflineIterationModel::decode_window_ns(std::int64_t batch, std::int64_t kv0_tok, std::int64_t iterations) const {
  if (iterations <= 0) return 0;
  // compute(j) and memory(j) are linear in j (fs), so memory - compute is
  // D0 + j d exactly: the larger side is a prefix of one and a suffix of the
  // other, and where they cross is one division (this was a binary search,
  // the same j: the predicate is monotone).
  const Int128 compute0 = compute_fs(batch, kv0_tok, 0), memory0 = memory_fs(batch, kv0_tok);
  const Int128 d = (static_cast<Int128>(memory_fs(batch, kv0_tok + batch)) - memory0) -
                   (static_cast<Int128>(compute_fs(batch, kv0_tok + batch, 0)) - compute0);
  const Int128 d0 = memory0 - compute0;
  const bool memory_grows_faster = d >= 0;
  // First j where the later-dominating side dominates (memory >= compute, or
  // compute > memory), or `iterations` if none.
  Int128 first = 0;
  if (memory_grows_faster) {
    if (d0 < 0) first = d == 0 ? Int128{iterations} : (-d0 + d - 1) / d;
  } else if (d0 >= 0) {
    first = d0 / -d + 1;
  }
  const std::int64_t split = static_cast<std::int64_t>(std::min<Int128>(first, iterations));
  // sum over j in [from, to) of floor((x0 + slope * j) / 1e6) with x(j) linear.
  const auto sum_fs = [](std::int64_t from, std::int64_t to, std::int64_t base_fs, std::int64_t kv_from, std::int64_t batch_,
                         std::int64_t per_kv) {
    const std::int64_t n = to - from;
    if (n <= 0) return std::int64_t{0};
    return floor_sum(n, 1000000, batch_ * per_kv, base_fs + kv_from * per_kv);
  };
  const std::int64_t compute_base = batch * linear_fs_per_tok_;
  const std::int64_t memory_base = weights_read_ns(batch) * 1000000;
  std::int64_t total = iterations * (overhead_ns_ + comm_ns(batch));
  const std::int64_t kv_split = kv0_tok + split * batch;
  if (memory_grows_faster) {
    total += sum_fs(0, split, compute_base, kv0_tok, batch, attn_fs_per_ctx_);
    total += sum_fs(split, iterations, memory_base, kv_split, batch, kv_fs_per_tok_);
  } else {
    total += sum_fs(0, split, memory_base, kv0_tok, batch, kv_fs_per_tok_);
    total += sum_fs(split, iterations, compute_base, kv_split, batch, attn_fs_per_ctx_);
  }
  return total;
}

std::string RooflineIterationModel::describe() const {
  return fmt::format(
      "{}: weights {} us/iter (dense), KV {:.1f} ps/token, compute {:.3f} us/token + {:.1f} ps per context token, "
      "collectives {} us + {:.1f} ps/token, overhead {} us",
      name_, dense_weights_ns_ / 1000, static_cast<double>(kv_fs_per_tok_) / 1000.0, static_cast<double>(linear_fs_per_tok_) / 1e9,
      static_cast<double>(attn_fs_per_ctx_) / 1000.0, comm_fixed_ns_ / 1000, static_cast<double>(comm_fs_per_tok_) / 1000.0,
      overhead_ns_ / 1000);
}

std::int64_t LinearIterationModel::iteration_ns(const IterationShape& s) const {
  std::int64_t t = 0;
  if (s.decode_batch() > 0) t += p_.base_ns + p_.per_request_ns * s.decode_batch() + s.resident_kv_tok * p_.per_kv_tok_ps / 1000;
  if (s.prefill_requests > 0) {
    t += p_.prefill_base_ns + p_.per_prefill_request_ns * s.prefill_requests + p_.per_prefill_tok_ns * s.prefill_tok +
         p_.per_padded_prefill_tok_ns * s.prefill_requests * s.prefill_longest_tok;
  }
  return t;
}

std::int64_t LinearIterationModel::decode_window_ns(std::int64_t batch, std::int64_t kv0_tok, std::int64_t iterations) const {
  if (iterations <= 0) return 0;
  return iterations * (p_.base_ns + p_.per_request_ns * batch) +
         floor_sum(iterations, 1000, batch * p_.per_kv_tok_ps, kv0_tok * p_.per_kv_tok_ps);
}

std::string LinearIterationModel::describe() const {
  auto k = [](std::int64_t v) { return static_cast<double>(v) / 1000.0; };
  return fmt::format(
      "linear (calibrated): decode {} us + {} us/request + {} ns/KV token; prefill {} us + {} us/request + {} us/token + {} us/padded "
      "token",
      k(p_.base_ns), k(p_.per_request_ns), k(p_.per_kv_tok_ps), k(p_.prefill_base_ns), k(p_.per_prefill_request_ns),
      k(p_.per_prefill_tok_ns), k(p_.per_padded_prefill_tok_ns));
}

}  // namespace april::sim
