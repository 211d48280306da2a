#include "sim/engine_knobs.hpp"

#include <fmt/format.h>

#include <cmath>

#include "sim/profiles.hpp"

namespace april::sim {

namespace {

// Upper bounds: far past any real engine, small enough that a step's
// nanoseconds stay well inside int64 (TimeNs).
constexpr double kMaxIterationCostUnits = 1e9;  // us (1000 s) or ns per token (1 s)
constexpr double kMaxKvCapacityTok = 1e12;      // tokens per engine
constexpr double kMaxAbortLatency_s = 1e4;

}  // namespace

void declare_engine_knobs(base::ConfigSchema& s) {
  using base::KnobType;
  s.add({"model", KnobType::String, std::string("qwen3-4b"), "", "model profile", base::one_of(model_names())});
  s.add({"hardware", KnobType::String, std::string("h100"), "", "GPU profile", base::one_of(hardware_names())});
  s.add({"cluster.gpus", KnobType::Int, std::int64_t{8}, "GPUs", "GPUs shared by rollout and training (colocated)", base::in_range(1, 1 << 20)});
  s.add({"cluster.engines", KnobType::Int, std::int64_t{4}, "engines", "rollout engines", base::in_range(1, 1 << 16)});
  s.add({"cluster.tensor_parallel", KnobType::Int, std::int64_t{2}, "GPUs", "GPUs per engine (tensor parallel)", base::in_range(1, 1024)});
  s.add({"engine.max_running", KnobType::Int, std::int64_t{256}, "requests", "cap on running requests per engine; 0 = no cap",
         base::in_range(0, 1 << 20)});
  s.add({"engine.kv_capacity_tok", KnobType::Int, std::int64_t{0}, "tok",
         "KV-cache capacity per engine; 0 = from GPU memory, memory fraction and model", base::in_range(0, kMaxKvCapacityTok)});
  s.add({"engine.gpu_memory_fraction", KnobType::Double, 0.85, "", "share of GPU memory for weights + KV cache",
         base::in_range(0.05, 1.0)});
  s.add({"engine.iteration_model", KnobType::String, std::string("roofline"), "",
         "iteration-time model: roofline, constant, or linear (calibrated by `april calibrate`)",
         base::one_of({"roofline", "constant", "linear"})});
  s.add({"engine.linear_base_us", KnobType::Double, 0.0, "us", "linear model: fixed cost of an iteration's decode pass", base::in_range(0, kMaxIterationCostUnits)});
  s.add({"engine.linear_per_request_us", KnobType::Double, 0.0, "us", "linear model: decode cost per decoding request",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({"engine.linear_per_kv_tok_ns", KnobType::Double, 0.0, "ns", "linear model: decode cost per resident KV token", base::in_range(0, kMaxIterationCostUnits)});
  s.add({"engine.linear_prefill_base_us", KnobType::Double, 0.0, "us", "linear model: fixed cost of an iteration's prefill pass",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({"engine.linear_per_prefill_request_us", KnobType::Double, 0.0, "us",
         "linear model: prefill cost per admitted request, whatever its length", base::in_range(0, kMaxIterationCostUnits)});
  s.add({"engine.linear_per_prefill_tok_us", KnobType::Double, 0.0, "us", "linear model: cost per prefilled token", base::in_range(0, kMaxIterationCostUnits)});
  s.add({"engine.linear_per_padded_prefill_tok_us", KnobType::Double, 0.0, "us",
         "linear model: cost per token of a prefill padded to its longest context (admitted x longest)", base::in_range(0, kMaxIterationCostUnits)});
  s.add({"engine.constant_iteration_us", KnobType::Double, 1000.0, "us", "iteration time of the constant model",
         base::in_range(1e-3, kMaxIterationCostUnits)});
  s.add({"engine.compute_efficiency", KnobType::Double, 0.6, "", "roofline: achieved fraction of peak FLOP/s",
         base::in_range(0.01, 1)});
  s.add({"engine.hbm_efficiency", KnobType::Double, 0.8, "", "roofline: achieved fraction of HBM bandwidth",
         base::in_range(0.01, 1)});
  s.add({"engine.iteration_overhead_us", KnobType::Double, 500.0, "us",
         "roofline: fixed cost per iteration (scheduling, sampling, launches)", base::in_range(0, kMaxIterationCostUnits)});
  s.add({"engine.prefill", KnobType::String, std::string("batched"), "",
         "batched: admitted contexts are prefilled in one pass that yields their first token; per_token: contexts are fed one "
         "token per decode iteration (`april live` with live.exact_prefill)",
         base::one_of({"batched", "per_token"})});
  // An abort's cost beyond the wait for each engine's iteration boundary.
  // slime ends an APRIL rollout with an HTTP abort_request(abort_all) to
  // every engine and waits until they are idle: localhost round trips through
  // SGLang's HTTP server and its tokenizer-manager -> scheduler hop, then one
  // aborted response per request back through the tokenizer manager to the
  // client. The defaults are order-of-magnitude estimates of those (not
  // measured on SGLang); `april calibrate` fits both from a live profile.
  // What the controller waits after that (a poll's retry) is engine.abort_confirm_s.
  s.add({"engine.abort_latency_s", KnobType::Double, 0.01, "s",
         "abort: from the decision until the engines act on it (they go on generating meanwhile); then each stops at its "
         "next iteration boundary",
         base::in_range(0, kMaxAbortLatency_s)});
  s.add({"engine.abort_per_request_us", KnobType::Double, 200.0, "us",
         "abort: per request an engine releases (queued or running), one after another on that engine",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({"engine.slowdown_beside_train", KnobType::Double, 1.0, "x",
         "disaggregated: engine iterations that start while a train step computes take this many times longer (engines and "
         "trainer sharing a host's cores or memory bandwidth; april validate measures it for the live backend); 1 = separate machines",
         base::in_range(1, 100)});
  s.add({"engine.abort_confirm_s", KnobType::Double, 0.0, "s",
         "abort: from the last engine idle until the rollout knows it (engines idle meanwhile): 0 as in the APRIL-era slime, which "
         "awaited the aborted responses; current slime polls each engine's load and retries every 3 s while requests remain",
         base::in_range(0, kMaxAbortLatency_s)});
  s.add({"engine.fast_forward", KnobType::Bool, true, "",
         "jump over iterations in which the batch cannot change (identical results, far fewer events)", {}});
}

std::int64_t kv_capacity_tok(const base::Config& c) {
  if (c.get_int("engine.kv_capacity_tok") > 0) return c.get_int("engine.kv_capacity_tok");
  const auto hw_all = builtin_hardware();
  const auto model_all = builtin_models();
  const auto& hw = find_hardware(hw_all, c.get_string("hardware"));
  const auto& model = find_model(model_all, c.get_string("model"));
  const double tp = static_cast<double>(c.get_int("cluster.tensor_parallel"));
  const double free_bytes = hw.memory_bytes * tp * c.get_double("engine.gpu_memory_fraction") - model.weight_bytes();
  if (free_bytes <= 0) {
    throw base::ConfigError(fmt::format("{} does not fit in {} x {} at engine.gpu_memory_fraction {}", model.name,
                                       c.get_int("cluster.tensor_parallel"), hw.name, c.get_double("engine.gpu_memory_fraction")));
  }
  return static_cast<std::int64_t>(free_bytes / model.kv_bytes_per_token());
}

std::shared_ptr<const IterationModel> make_iteration_model(const base::Config& c) {
  if (c.get_string("engine.iteration_model") == "linear") {
    LinearIterationParams p;
    p.base_ns = std::llround(c.get_double("engine.linear_base_us") * 1e3);
    p.per_request_ns = std::llround(c.get_double("engine.linear_per_request_us") * 1e3);
    p.per_kv_tok_ps = std::llround(c.get_double("engine.linear_per_kv_tok_ns") * 1e3);
    p.prefill_base_ns = std::llround(c.get_double("engine.linear_prefill_base_us") * 1e3);
    p.per_prefill_request_ns = std::llround(c.get_double("engine.linear_per_prefill_request_us") * 1e3);
    p.per_prefill_tok_ns = std::llround(c.get_double("engine.linear_per_prefill_tok_us") * 1e3);
    p.per_padded_prefill_tok_ns = std::llround(c.get_double("engine.linear_per_padded_prefill_tok_us") * 1e3);
    return std::make_shared<LinearIterationModel>(p);
  }
  if (c.get_string("engine.iteration_model") == "constant") {
    return std::make_shared<ConstantIterationModel>(std::llround(c.get_double("engine.constant_iteration_us") * 1000.0));
  }
  const auto hw_all = builtin_hardware();
  const auto model_all = builtin_models();
  RooflineParams p;
  p.compute_efficiency = c.get_double("engine.compute_efficiency");
  p.hbm_efficiency = c.get_double("engine.hbm_efficiency");
  p.overhead_ns = std::llround(c.get_double("engine.iteration_overhead_us") * 1000.0);
  p.tensor_parallel = c.get_int("cluster.tensor_parallel");
  return std::make_shared<RooflineIterationModel>(find_hardware(hw_all, c.get_string("hardware")),
                                                       find_model(model_all, c.get_string("model")), p);
}

EngineConfig engine_config(const base::Config& c) {
  EngineConfig e;
  e.max_running = c.get_int("engine.max_running");
  e.kv_capacity_tok = kv_capacity_tok(c);
  e.fast_forward = c.get_bool("engine.fast_forward");
  e.per_token_prefill = c.get_string("engine.prefill") == "per_token";
  return e;
}

}  // namespace april::sim
