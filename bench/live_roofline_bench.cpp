// The live engine's decode throughput against a simple CPU roofline, in one run:
//  - peak: measured GEMM FLOP/s at the model's own shapes, and copy bandwidth;
//  - model: FLOPs and bytes per decode iteration of the fixed-shape engine
//    (every slot computed, so the work per iteration is the same whether a
//    slot is busy or not);
//  - achieved: tokens/s of the engine with every slot busy.
// usage: april_live_bench [SIZE] [SLOTS] [THREADS]   (default: small 128 2)
#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/kv_engine.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string size = argc > 1 ? argv[1] : "small";
  const std::int64_t slots = argc > 2 ? std::atoll(argv[2]) : 128;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  april::live::configure_runtime(threads);
  torch::NoGradGuard no_grad;
  const auto cfg = april::live::model_config(size, 36, 51);

  // Peak GEMM rate at the engine's largest decode shape: [slots, d] x [d, d_ff].
  const auto a = torch::randn({slots, cfg.d_model});
  const auto w = torch::randn({cfg.d_model, cfg.d_ff});
  for (int i = 0; i < 3; ++i) (void)torch::matmul(a, w);
  int reps = 0;
  auto t0 = std::chrono::steady_clock::now();
  while (seconds_since(t0) < 1.0) {
    (void)torch::matmul(a, w);
    ++reps;
  }
  const double gemm_flop_s = 2.0 * static_cast<double>(slots * cfg.d_model * cfg.d_ff) * reps / seconds_since(t0);
  // Copy bandwidth: read + write of a 256 MB buffer.
  const auto big = torch::empty({64 * 1024 * 1024}, torch::kFloat32).fill_(1.0F);
  auto dst = torch::empty_like(big);
  reps = 0;
  t0 = std::chrono::steady_clock::now();
  while (seconds_since(t0) < 1.0) {
    dst.copy_(big);
    ++reps;
  }
  const double bytes_s = 2.0 * static_cast<double>(big.numel()) * 4.0 * reps / seconds_since(t0);

  // Work per iteration: 2 FLOPs per weight per row, plus attention over the
  // whole cache length (fixed shapes): 4 * layers * d_model * max_seq per row.
  const double weights = static_cast<double>(cfg.parameters() - cfg.vocab * cfg.d_model);  // the embedding is a lookup
  const double flops_iter = static_cast<double>(slots) * (2.0 * weights + 4.0 * static_cast<double>(cfg.n_layers * cfg.d_model * cfg.max_seq));
  const double kv_bytes = 2.0 * static_cast<double>(cfg.n_layers * slots * cfg.n_kv_heads * cfg.max_seq * cfg.head_dim()) * 4.0;
  const double bytes_iter = weights * 4.0 + kv_bytes;
  const double t_compute = flops_iter / gemm_flop_s, t_memory = bytes_iter / bytes_s;
  const double roofline_tok_s = static_cast<double>(slots) / std::max(t_compute, t_memory);

  // Achieved: every slot busy, no EOS, 40 iterations.
  torch::manual_seed(1);
  april::live::Transformer model(cfg);
  april::live::EngineOptions eo;
  eo.slots = slots;
  eo.eos = -1;
  eo.exact_prefill = false;
  april::live::KvEngine engine(model, eo);
  for (std::int64_t k = 0; k < slots; ++k) {
    engine.add({static_cast<std::uint64_t>(k), {1, static_cast<std::int32_t>(4 + k % 30), 2}, 0, 45, static_cast<std::uint64_t>(k)});
  }
  engine.step();  // admissions and prefill
  const auto tok0 = engine.stats().decoded_tok;
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) engine.step();
  const double achieved = static_cast<double>(engine.stats().decoded_tok - tok0) / seconds_since(t0);

  fmt::print("model {} ({:.2f}M parameters), {} slots, {} torch threads\n", size, static_cast<double>(cfg.parameters()) / 1e6, slots, threads);
  fmt::print("measured peak: GEMM {:.1f} GFLOP/s at [{}x{}]x[{}x{}]; copy bandwidth {:.1f} GB/s\n", gemm_flop_s / 1e9, slots, cfg.d_model,
             cfg.d_model, cfg.d_ff, bytes_s / 1e9);
  fmt::print("per iteration: {:.2f} GFLOP ({:.1f} ms at peak), {:.1f} MB ({:.1f} ms at peak): {}-bound\n", flops_iter / 1e9, 1e3 * t_compute,
             bytes_iter / 1e6, 1e3 * t_memory, t_compute > t_memory ? "compute" : "memory");
  fmt::print("decode: {:.0f} tok/s achieved, roofline {:.0f} tok/s: {:.0f}% of the roofline\n", achieved, roofline_tok_s,
             100.0 * achieved / roofline_tok_s);
  return 0;
}
