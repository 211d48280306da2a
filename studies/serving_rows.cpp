#include "studies/serving_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <queue>
#include <utility>

#include "base/config.hpp"
#include "base/json_file.hpp"
#include "sim/engine_memory.hpp"
#include "sim/fitted_defaults.hpp"
#include "sim/hardware.hpp"
#include "studies/component_fields.hpp"

namespace april::studies {

std::vector<ServingRow> read_serving_rows(const std::string& path) {
  const auto f = base::read_json_file(path, "serving benchmark rows");
  const auto dir = std::filesystem::path(path).parent_path();
  std::vector<ServingRow> out;
  for (const auto& [i, x] : component_rows(f)) {
    const RowFields r(f, x, i);
    ServingRow s;
    s.id = r.text("id");
    s.engine = r.text("engine");
    if (s.engine != "sglang" && s.engine != "vllm" && s.engine != "trtllm")
      r.refuse("engine", fmt::format("'{}': sglang, vllm or trtllm", s.engine));
    s.model = builtin_or_beside(r.text("april_model"), dir);
    s.accelerator = r.text("accelerator");
    s.tensor_parallel = r.count("tensor_parallel", 1, 1, 1024);
    s.expert_parallel = r.count("expert_parallel", 1, 1, 1024);
    s.data_parallel = r.count("data_parallel", 1, 1, 1024);
    s.weight_dtype = sim::dtype_from_string(r.text_or("weight_dtype", "bf16"), r.where("weight_dtype"));
    s.kv_dtype = sim::dtype_from_string(r.text_or("kv_dtype", "bf16"), r.where("kv_dtype"));
    s.dp_attention = r.flag_or("dp_attention", false);
    const auto lengths = r.text("lengths");
    if (lengths != "fixed" && lengths != "mean") r.refuse("lengths", fmt::format("'{}': fixed or mean", lengths));
    s.varied_lengths = lengths == "mean";
    s.input_tok = r.count("input_tok", -1, 1, 1 << 20);
    s.output_tok = r.count("output_tok", -1, 1, 1 << 20);
    s.concurrency = r.count("concurrency", 0, 0, 1 << 20);
    s.num_prompts = r.count("num_prompts", 0, 0, 1 << 24);
    if (s.concurrency == 0 && s.num_prompts == 0) r.refuse("concurrency", "neither concurrency nor num_prompts is given");
    double tok_s = r.number("throughput_tok_s", 1e-3, 1e9);
    const auto kind = r.text("throughput_kind");
    if (kind == "total")
      tok_s *= static_cast<double>(s.output_tok) / static_cast<double>(s.input_tok + s.output_tok);
    else if (kind != "output")
      r.refuse("throughput_kind", fmt::format("'{}': output or total", kind));
    const auto scope = r.text("throughput_scope");
    if (scope == "per_gpu")
      tok_s *= static_cast<double>(s.tensor_parallel * s.data_parallel);
    else if (scope != "server")
      r.refuse("throughput_scope", fmt::format("'{}': server or per_gpu", scope));
    s.output_tok_s = tok_s;
    s.source = r.source();
    r.check_resolves(s.model, s.accelerator);
    out.push_back(std::move(s));
  }
  return out;
}

double predict_serving_tok_s(const ServingRow& row, const sim::ModelArch& model, const sim::Accelerator& hw, const EngineFit& fit) {
  sim::RooflineParams p;
  p.compute_efficiency = fit.compute_efficiency;
  p.hbm_efficiency = sim::fitted::uses_h20_hbm_efficiency(hw.engine_hbm_class) ? fit.h20_hbm_efficiency : fit.hbm_efficiency;
  p.moe_compute_efficiency = fit.moe_compute_efficiency;
  // The share is SGLang's and vLLM's fused-MoE kernels' (the engines a rollout
  // runs); TensorRT-LLM's CUTLASS grouped GEMMs read the experts at the dense rate.
  p.moe_hbm_share = row.engine == "trtllm" ? 1.0 : fit.moe_hbm_share;
  p.overhead_ns = std::llround(fit.overhead_us * 1e3);
  p.collective_latency_ns = std::llround(fit.collective_latency_us * 1e3);
  p.tensor_parallel = row.tensor_parallel;
  p.expert_parallel = row.expert_parallel;
  p.weight_dtype = row.weight_dtype;
  p.kv_dtype = row.kv_dtype;
  p.dp_attention = row.dp_attention;
  const sim::RooflineIterationModel engine(hw, model, p);
  // Requests in flight on one engine: its share of the concurrency (or of
  // the prompts), as many as the KV cache holds at their mean full length
  // (memory fraction 0.9, vLLM's gpu_memory_utilization default and about
  // SGLang's mem_fraction_static on these GPUs).
  const auto dp = row.data_parallel;
  const std::int64_t prompts = std::max<std::int64_t>(1, (std::max(row.num_prompts, row.concurrency) + dp - 1) / dp);
  std::int64_t slots = row.concurrency > 0 ? std::min(prompts, (row.concurrency + dp - 1) / dp) : prompts;
  sim::EngineLayout layout;
  layout.tensor_parallel = row.tensor_parallel;
  layout.memory_fraction = 0.9;
  layout.weight_dtype = row.weight_dtype;
  layout.kv_dtype = row.kv_dtype;
  layout.dp_attention = row.dp_attention;
  const auto memory = sim::engine_memory(model, hw, layout);
  if (memory.fits()) slots = std::clamp<std::int64_t>(memory.kv_capacity_tok / (row.input_tok + row.output_tok), 1, slots);
  if (!row.varied_lengths) {
    // Equal lengths: the replay below runs in waves of `slots` prompts that
    // start and end together; the same sums, wave by wave.
    double t_ns = 0;
    for (std::int64_t left = prompts; left > 0; left -= slots) {
      const auto b = std::min(left, slots);
      const sim::IterationShape prefill{b, b * row.input_tok, b, b * row.input_tok, row.input_tok};
      t_ns += static_cast<double>(engine.iteration_ns(prefill)) +
              static_cast<double>(engine.decode_window_ns(b, b * (row.input_tok + 1), row.output_tok - 1));
    }
    return static_cast<double>(dp * prompts * row.output_tok) / (t_ns * 1e-9);
  }
  // Each prompt's lengths, spread evenly about the row's means.
  std::vector<std::int64_t> in(static_cast<std::size_t>(prompts)), out(static_cast<std::size_t>(prompts));
  {
    const auto spread = [&](std::int64_t mean, std::uint64_t salt, std::vector<std::int64_t>& v) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        // A fixed permutation of the quantiles (multiplicative hashing), so input and output lengths are unrelated.
        const auto k = (i * 2654435761ULL + salt) % v.size();
        const double q = (static_cast<double>(k) + 0.5) / static_cast<double>(v.size());
        v[i] = std::max<std::int64_t>(1, std::llround(1.0 + q * static_cast<double>(2 * mean - 2)));
      }
    };
    spread(row.input_tok, 0, in);
    spread(row.output_tok, 7919, out);
  }
  // The replay: `it` counts iterations; a prompt admitted at iteration a gets
  // its first token there and its last at a + out - 1.
  using Finish = std::pair<std::int64_t, std::size_t>;
  std::priority_queue<Finish, std::vector<Finish>, std::greater<>> running;
  std::int64_t it = 0, kv_tok = 0, tokens = 0;
  double t_ns = 0;
  std::size_t next = 0;
  while (next < in.size() || !running.empty()) {
    const auto batch = static_cast<std::int64_t>(running.size());
    if (next < in.size() && batch < slots) {
      sim::IterationShape shape{batch, kv_tok, 0, 0, 0};
      while (next < in.size() && static_cast<std::int64_t>(running.size()) < slots) {
        ++shape.prefill_requests;
        shape.prefill_tok += in[next];
        shape.prefill_longest_tok = std::max(shape.prefill_longest_tok, in[next]);
        running.push({it + out[next] - 1, next});
        ++next;
      }
      shape.batch += shape.prefill_requests;
      shape.resident_kv_tok += shape.prefill_tok;
      t_ns += static_cast<double>(engine.iteration_ns(shape));
      kv_tok += shape.prefill_tok + shape.batch;
      tokens += shape.batch;
      ++it;
    } else {
      // Decode until the first running prompt finishes.
      const auto steps = running.top().first - it + 1;
      t_ns += static_cast<double>(engine.decode_window_ns(batch, kv_tok, steps));
      kv_tok += batch * steps;
      tokens += batch * steps;
      it += steps;
    }
    while (!running.empty() && running.top().first < it) {
      const auto i = running.top().second;
      kv_tok -= in[i] + out[i];
      running.pop();
    }
  }
  return static_cast<double>(dp * tokens) / (t_ns * 1e-9);
}

}  // namespace april::studies
