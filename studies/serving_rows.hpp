#pragma once
// Serving benchmarks that others published (engine, model, accelerator, TP,
// fixed input and output lengths, concurrency, output token throughput), and
// the engine's iteration model run on each as the benchmark ran: the
// component check and fit of the engine's defaults (docs/published-runs.md,
// "Component checks").
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/hardware.hpp"
#include "sim/iteration_model.hpp"
#include "sim/model_arch.hpp"

namespace april::studies {

struct ServingRow {
  std::string id, engine, model, accelerator;  // model: a built-in name or a config file's path
  std::int64_t tensor_parallel = 1, expert_parallel = 1, data_parallel = 1;
  sim::DType weight_dtype = sim::DType::BF16, kv_dtype = sim::DType::BF16;
  bool dp_attention = false;  // attention data-parallel over the engine's GPUs (SGLang --enable-dp-attention, TRT-LLM ADP)
  std::int64_t input_tok = 0, output_tok = 0;
  // The lengths are means of lengths that vary (a random or ShareGPT
  // dataset), not every request's.
  bool varied_lengths = false;
  std::int64_t concurrency = 0;  // requests in flight over the whole server; 0: num_prompts at once
  std::int64_t num_prompts = 0;
  double output_tok_s = 0;  // the whole server's output tokens per second
  nlohmann::json source;
};

// Reads `path` (the format in docs/published-runs.md); a row's model that is
// not built in is a config file beside it. base::ConfigError names the file,
// the row and the field of anything wrong.
std::vector<ServingRow> read_serving_rows(const std::string& path);

// The engine defaults a serving fit chooses: those of RooflineParams that no
// source states (the rest come from the row and the accelerator's datasheet).
struct EngineFit {
  double compute_efficiency = 0.6, hbm_efficiency = 0.8, overhead_us = 500, collective_latency_us = 5;
  double h20_hbm_efficiency = 0.4;      // in place of hbm_efficiency on an H20 (sim/fitted_defaults.hpp)
  double moe_compute_efficiency = 0.6;  // the routed experts' grouped GEMMs
  double moe_hbm_share = 1.0;           // the routed experts' weights' bandwidth, a share of the dense weights'
};

// The row's output tokens per second as april's engine model predicts it,
// the benchmark replayed on each of the server's data-parallel engines: its
// share of the prompts through its share of the concurrency slots (all at
// once when none is given), as many in flight as its KV cache holds. A freed
// slot admits the next prompt at the next iteration, which prefills it beside
// the others' decode. Varied lengths are spread evenly over [1, 2 x mean - 1]
// (SGLang's random dataset at its default range ratio), in a fixed shuffle.
// The row's model and accelerator come resolved: a fit asks thousands of times.
double predict_serving_tok_s(const ServingRow& row, const sim::ModelArch& model, const sim::Accelerator& hw, const EngineFit& fit);

}  // namespace april::studies
