#include "sim/iteration_model.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace april::sim {

__extension__ typedef __int128 Int128;

std::int64_t IterationModel::decode_window_ns(std::int64_t batch, std::int64_t kv0_tok, std::int64_t iterations) const {
  std::int64_t total = 0;
  for (std::int64_t j = 0; j < iterations; ++j) total += iteration_ns(decode_shape(batch, kv0_tok + j * batch));
  return total;
}

std::string ConstantIterationModel::describe() const { return fmt::format("constant {} ns per iteration", iteration_ns_); }

std::int64_t floor_sum(std::int64_t n, std::int64_t m, std::int64_t a, std::int64_t b) {
  // The classic Euclid-like reduction, in 128-bit to stay exact.
  Int128 N = n, M = m, A = a, B = b, ans = 0;
  while (true) {
    if (A >= M) {
      ans += (N - 1) * N / 2 * (A / M);
      A %= M;
    }
    if (B >= M) {
      ans += N * (B / M);
      B %= M;
    }
    const Int128 y_max = A * N + B;
    if (y_max < M) break;
    N = y_max / M;
    B = y_max % M;
    std::swap(M, A);
  }
  return static_cast<std::int64_t>(ans);
}

RooflineIterationModel::RooflineIterationModel(const HardwareProfile& hw, const ModelProfile& model, const RooflineParams& p)
    : name_(fmt::format("roofline {} on {} x{}", model.name, hw.name, p.tensor_parallel)), overhead_ns_(p.overhead_ns) {
  if (p.tensor_parallel < 1) throw std::invalid_argument("tensor_parallel must be >= 1");
  const double tp = static_cast<double>(p.tensor_parallel);
  const double flop_s = tp * hw.peak_bf16_flop_s * p.compute_efficiency;
  const double bytes_s = tp * hw.hbm_bytes_s * p.hbm_efficiency;
  flop_ns_per_token_ = 2.0 * model.params / flop_s * 1e9;
  weights_ns_ = std::llround(model.weight_bytes() / bytes_s * 1e9);
  kv_fs_per_tok_ = std::llround(model.kv_bytes_per_token() / bytes_s * 1e15);
}

std::int64_t RooflineIterationModel::compute_ns(std::int64_t tokens) const {
  return std::llround(flop_ns_per_token_ * static_cast<double>(tokens));
}

std::int64_t RooflineIterationModel::memory_ns(std::int64_t kv_tok) const {
  return weights_ns_ + static_cast<std::int64_t>(static_cast<Int128>(kv_tok) * kv_fs_per_tok_ / 1000000);
}

std::int64_t RooflineIterationModel::iteration_ns(const IterationShape& s) const {
  // One fused pass (SGLang / vLLM style): prefill tokens ride with the batch.
  return overhead_ns_ + std::max(compute_ns(s.batch + s.prefill_tok), memory_ns(s.resident_kv_tok));
}

std::int64_t RooflineIterationModel::decode_window_ns(std::int64_t batch, std::int64_t kv0_tok, std::int64_t iterations) const {
  if (iterations <= 0) return 0;
  const std::int64_t c = compute_ns(batch);
  // memory_ns grows with j; find the first j where it reaches the compute time.
  std::int64_t lo = 0, hi = iterations;  // answer in [0, iterations]
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (memory_ns(kv0_tok + mid * batch) >= c) hi = mid; else lo = mid + 1;
  }
  const std::int64_t compute_bound = lo;
  const std::int64_t n = iterations - compute_bound;
  const std::int64_t kv_start = kv0_tok + compute_bound * batch;
  // sum_j floor((kv_start + j*batch) * fs / 1e6), split so that a and b stay in int64.
  const std::int64_t mem_sum = n * weights_ns_ + floor_sum(n, 1000000, batch * kv_fs_per_tok_,
                                                           static_cast<std::int64_t>(static_cast<Int128>(kv_start) * kv_fs_per_tok_));
  return iterations * overhead_ns_ + compute_bound * c + mem_sum;
}

std::string RooflineIterationModel::describe() const {
  return fmt::format("{}: weights {} us/iter, KV {:.1f} ps/token, compute {:.3f} us/token, overhead {} us", name_,
                     weights_ns_ / 1000, static_cast<double>(kv_fs_per_tok_) / 1000.0, flop_ns_per_token_ / 1000.0,
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
  return iterations * (p_.base_ns + p_.per_request_ns * batch) + floor_sum(iterations, 1000, batch * p_.per_kv_tok_ps, kv0_tok * p_.per_kv_tok_ps);
}

std::string LinearIterationModel::describe() const {
  auto k = [](std::int64_t v) { return static_cast<double>(v) / 1000.0; };
  return fmt::format(
      "linear (calibrated): decode {} us + {} us/request + {} ns/KV token; prefill {} us + {} us/request + {} us/token + {} us/padded token",
      k(p_.base_ns), k(p_.per_request_ns), k(p_.per_kv_tok_ps), k(p_.prefill_base_ns), k(p_.per_prefill_request_ns),
      k(p_.per_prefill_tok_ns), k(p_.per_padded_prefill_tok_ns));
}

}  // namespace april::sim
