#pragma once
// How long one continuous-batching iteration takes. The fast-forward path asks
// for the total of a window of identical decode iterations (batch fixed, KV
// growing by `batch` tokens per iteration); each model answers in closed form,
// in integers, so that the total equals the sum of single iterations exactly.
#include <cstdint>
#include <memory>
#include <string>

#include "sim/profiles.hpp"

namespace april::sim {

class IterationModel {
 public:
  virtual ~IterationModel() = default;
  // One iteration with `batch` running requests, `resident_kv_tok` tokens in
  // the KV cache when it starts, and `prefill_tok` prompt tokens prefilled in it.
  [[nodiscard]] virtual std::int64_t iteration_ns(std::int64_t batch, std::int64_t resident_kv_tok,
                                                  std::int64_t prefill_tok) const = 0;
  // Sum of iteration_ns(batch, kv0_tok + j * batch, 0) for j in [0, iterations).
  [[nodiscard]] virtual std::int64_t decode_window_ns(std::int64_t batch, std::int64_t kv0_tok,
                                                      std::int64_t iterations) const;
  [[nodiscard]] virtual std::string describe() const = 0;
};

// A fixed time per iteration, whatever the batch: for checks by hand.
class ConstantIterationModel final : public IterationModel {
 public:
  explicit ConstantIterationModel(std::int64_t iteration_ns) : iteration_ns_(iteration_ns) {}
  [[nodiscard]] std::int64_t iteration_ns(std::int64_t, std::int64_t, std::int64_t) const override { return iteration_ns_; }
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
};

// max(compute, memory) + overhead, per engine of `tensor_parallel` GPUs:
//   compute = 2 * params * (batch + prefill_tok) / (tp * peak * compute_eff)
//   memory  = (weight_bytes + kv_bytes_per_tok * resident_kv_tok) / (tp * hbm * hbm_eff)
// Attention FLOPs are left out: decode attention reads each KV byte for a few
// FLOPs, far below the ridge point, so its cost is in the memory term.
class RooflineIterationModel final : public IterationModel {
 public:
  RooflineIterationModel(const HardwareProfile& hw, const ModelProfile& model, const RooflineParams& p);
  [[nodiscard]] std::int64_t iteration_ns(std::int64_t batch, std::int64_t resident_kv_tok,
                                          std::int64_t prefill_tok) const override;
  [[nodiscard]] std::int64_t decode_window_ns(std::int64_t batch, std::int64_t kv0_tok,
                                              std::int64_t iterations) const override;
  [[nodiscard]] std::string describe() const override;

  [[nodiscard]] std::int64_t weights_read_ns() const { return weights_ns_; }
  [[nodiscard]] std::int64_t kv_read_fs_per_tok() const { return kv_fs_per_tok_; }

 private:
  [[nodiscard]] std::int64_t compute_ns(std::int64_t tokens) const;
  [[nodiscard]] std::int64_t memory_ns(std::int64_t kv_tok) const;

  std::string name_;
  double flop_ns_per_token_;     // 2 * params / (tp * peak * eff) * 1e9
  std::int64_t weights_ns_;      // weight read time
  std::int64_t kv_fs_per_tok_;   // KV read time per resident token, femtoseconds
  std::int64_t overhead_ns_;
};

// Fitted to a live engine by `april calibrate`:
//   base + per_request * batch + per_kv_tok * resident_kv_tok + per_prefill_tok * prefill_tok
// in integer nanoseconds and picoseconds, so a decode window sums in closed form.
struct LinearIterationParams {
  std::int64_t base_ns = 0;
  std::int64_t per_request_ns = 0;
  std::int64_t per_kv_tok_ps = 0;
  std::int64_t per_prefill_tok_ns = 0;
};

class LinearIterationModel final : public IterationModel {
 public:
  explicit LinearIterationModel(const LinearIterationParams& p) : p_(p) {}
  [[nodiscard]] std::int64_t iteration_ns(std::int64_t batch, std::int64_t resident_kv_tok, std::int64_t prefill_tok) const override;
  [[nodiscard]] std::int64_t decode_window_ns(std::int64_t batch, std::int64_t kv0_tok, std::int64_t iterations) const override;
  [[nodiscard]] std::string describe() const override;

 private:
  LinearIterationParams p_;
};

// Sum over i in [0, n) of floor((a * i + b) / m), for a, b >= 0, m > 0.
std::int64_t floor_sum(std::int64_t n, std::int64_t m, std::int64_t a, std::int64_t b);

}  // namespace april::sim
