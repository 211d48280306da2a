// The live engine's decode throughput against a roofline, in one run, on the
// CPU or a CUDA device:
//  - peak: measured GEMM FLOP/s at the model's own shapes, and copy bandwidth
//    (bytes read + written);
//  - model: FLOPs and bytes per decode iteration of the fixed-shape engine
//    (every slot computed, so the work per iteration is the same whether a
//    slot is busy or not); the memory time is the HBM roofline on a GPU;
//  - achieved: tokens/s of the model's decode alone (what the roofline
//    bounds) and of the engine with every slot busy (decode + sampling).
//    On CUDA the model's decode is timed eager and replayed from a CUDA graph
//    (detail/decode_graph.hpp), as the engine runs it.
// usage: april_live_bench [SIZE] [SLOTS] [THREADS] [DEVICE] [fused] [bf16]   (default: small 128 1 cpu)
//   fused: torch 2.x's fused attention (live.fused_attention)
//   bf16:  bfloat16 weights and KV cache (live.engine_dtype=bfloat16); the GEMM peak is then bf16's
#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/decode_graph.hpp"
#include "adapters/live/detail/device.hpp"
#include "adapters/live/detail/kv_engine.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Device work is asynchronous: wait for it before reading the clock.
void settle(const torch::Device& d) {
  if (d.is_cuda()) torch::cuda::synchronize();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string size = argc > 1 ? argv[1] : "small";
  const std::int64_t slots = argc > 2 ? std::atoll(argv[2]) : 128;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  const std::string device_name = argc > 4 ? argv[4] : "cpu";
  bool fused = false, bf16 = false;
  for (int i = 5; i < argc; ++i) {
    const std::string flag = argv[i];
    fused = fused || flag == "fused";
    bf16 = bf16 || flag == "bf16";
  }
  const auto dtype = bf16 ? torch::kBFloat16 : torch::kFloat32;
  const double elem_bytes = bf16 ? 2.0 : 4.0;
  april::live::configure_runtime(threads);
  const auto dev = april::live::parse_device(device_name);
  torch::NoGradGuard no_grad;
  const auto cfg = april::live::model_config(size, 36, 51);
  const auto on_dev = torch::TensorOptions().dtype(dtype).device(dev);

  // Peak GEMM rate. On the CPU, at the engine's largest decode shape
  // [slots, d] x [d, d_ff] (what BLAS reaches there). On a GPU a small GEMM
  // measures launch latency, not the chip: take an 8192^3 product instead.
  const std::int64_t gm = dev.is_cuda() ? 8192 : slots, gk = dev.is_cuda() ? 8192 : cfg.d_model, gn = dev.is_cuda() ? 8192 : cfg.d_ff;
  const auto a = torch::randn({gm, gk}, on_dev);
  const auto w = torch::randn({gk, gn}, on_dev);
  for (int i = 0; i < 3; ++i) (void)torch::matmul(a, w);
  settle(dev);
  int reps = 0;
  auto t0 = std::chrono::steady_clock::now();
  while (seconds_since(t0) < 1.0) {
    for (int i = 0; i < 10; ++i) (void)torch::matmul(a, w);
    settle(dev);
    reps += 10;
  }
  const double gemm_flop_s = 2.0 * static_cast<double>(gm * gk * gn) * reps / seconds_since(t0);
  // Copy bandwidth: read + write of a 256 MB buffer (1 GiB on a GPU, well past its cache).
  const std::int64_t copy_floats = dev.is_cuda() ? 256LL * 1024 * 1024 : 64LL * 1024 * 1024;
  const auto big = torch::empty({copy_floats}, on_dev).fill_(1.0F);
  auto dst = torch::empty_like(big);
  dst.copy_(big);
  settle(dev);
  reps = 0;
  t0 = std::chrono::steady_clock::now();
  while (seconds_since(t0) < 1.0) {
    dst.copy_(big);
    settle(dev);
    ++reps;
  }
  const double bytes_s = 2.0 * static_cast<double>(big.numel()) * elem_bytes * reps / seconds_since(t0);

  // Work per iteration: 2 FLOPs per weight per row, plus attention over the
  // whole cache length (fixed shapes): 4 * layers * d_model * max_seq per row.
  const double weights = static_cast<double>(cfg.parameters() - cfg.vocab * cfg.d_model);  // the embedding is a lookup
  const double flops_iter =
      static_cast<double>(slots) * (2.0 * weights + 4.0 * static_cast<double>(cfg.n_layers * cfg.d_model * cfg.max_seq));
  const double kv_bytes = 2.0 * static_cast<double>(cfg.n_layers * slots * cfg.n_kv_heads * cfg.max_seq * cfg.head_dim()) * elem_bytes;
  const double bytes_iter = weights * elem_bytes + kv_bytes;
  const double t_compute = flops_iter / gemm_flop_s, t_memory = bytes_iter / bytes_s;
  const double roofline_tok_s = static_cast<double>(slots) / std::max(t_compute, t_memory);

  // Achieved by the model's decode alone: every slot at a mid-cache position.
  torch::manual_seed(1);
  april::live::Transformer model(cfg);
  model->to(dev, dtype);
  model->eval();
  if (fused) model->set_fast_attention(true);
  auto cache = model->make_cache(slots, dev, dtype);
  std::vector<std::int64_t> tok_host(static_cast<std::size_t>(slots)), pos_host(static_cast<std::size_t>(slots), cfg.max_seq / 2);
  for (std::size_t i = 0; i < tok_host.size(); ++i) tok_host[i] = 4 + static_cast<std::int64_t>(i) % (cfg.vocab - 4);
  const auto decode_rate = [&](bool graph) {
    april::live::DecodeGraph g(dev, graph);
    for (int i = 0; i < 3; ++i) (void)g.run(model, cache, tok_host, pos_host);
    settle(dev);
    int n = 0;
    const auto start = std::chrono::steady_clock::now();
    while (seconds_since(start) < 1.0) {
      for (int i = 0; i < 10; ++i) (void)g.run(model, cache, tok_host, pos_host);
      settle(dev);
      n += 10;
    }
    return std::make_pair(static_cast<double>(slots) * n / seconds_since(start), g.captured());
  };
  const double eager_tok_s = decode_rate(false).first;
  const auto [graph_tok_s, captured] = decode_rate(true);

  // Achieved by the engine: every slot busy, no EOS, 40 iterations.
  april::live::EngineOptions eo;
  eo.slots = slots;
  eo.eos.clear();
  eo.exact_prefill = false;
  eo.device = dev;
  eo.dtype = dtype;
  april::live::KvEngine engine(model, eo);  // a graph of its own where captured
  for (std::int64_t k = 0; k < slots; ++k) {
    engine.add({static_cast<std::uint64_t>(k), {1, static_cast<std::int32_t>(4 + k % 30), 2}, 0, 45, static_cast<std::uint64_t>(k)});
  }
  engine.step();  // admissions and prefill
  const auto tok0 = engine.stats().decoded_tok;
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) engine.step();
  const double achieved = static_cast<double>(engine.stats().decoded_tok - tok0) / seconds_since(t0);

  fmt::print("model {} ({:.2f}M parameters), {} slots, {} torch threads, device {}, {} attention, {}\n", size,
             static_cast<double>(cfg.parameters()) / 1e6, slots, threads, device_name, fused ? "fused" : "manual",
             bf16 ? "bfloat16" : "float32");
  fmt::print("measured peak: GEMM {:.1f} GFLOP/s at [{}x{}]x[{}x{}]; copy bandwidth {:.1f} GB/s\n", gemm_flop_s / 1e9, gm, gk, gk, gn,
             bytes_s / 1e9);
  fmt::print("per iteration: {:.2f} GFLOP ({:.1f} ms at peak), {:.1f} MB ({:.1f} ms at peak): {}-bound\n", flops_iter / 1e9,
             1e3 * t_compute, bytes_iter / 1e6, 1e3 * t_memory, t_compute > t_memory ? "compute" : "memory");
  const double memory_tok_s = static_cast<double>(slots) / t_memory;
  fmt::print("roofline {:.0f} tok/s; memory (HBM on a GPU) alone {:.0f} tok/s\n", roofline_tok_s, memory_tok_s);
  fmt::print("model decode, eager: {:.0f} tok/s, {:.0f}% of the roofline, {:.0f}% of the memory roofline\n", eager_tok_s,
             100.0 * eager_tok_s / roofline_tok_s, 100.0 * eager_tok_s / memory_tok_s);
  if (captured) {
    fmt::print("model decode, CUDA graph: {:.0f} tok/s, {:.0f}% of the roofline, {:.0f}% of the memory roofline ({:.2f}x eager)\n",
               graph_tok_s, 100.0 * graph_tok_s / roofline_tok_s, 100.0 * graph_tok_s / memory_tok_s, graph_tok_s / eager_tok_s);
  }
  fmt::print("engine: {:.0f} tok/s achieved (decode + sampling), {:.0f}% of the roofline\n", achieved, 100.0 * achieved / roofline_tok_s);
  return 0;
}
