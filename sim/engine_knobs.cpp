#include "sim/engine_knobs.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <algorithm>
#include <cmath>

#include "sim/engine_memory.hpp"
#include "sim/fitted_defaults.hpp"
#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "sim/scenario_inputs.hpp"

namespace april::sim {

namespace {

// Upper bounds: far past any real engine, small enough that a step's
// nanoseconds stay well inside int64 (TimeNs).
constexpr double kMaxIterationCostUnits = 1e9;  // us (1000 s) or ns per token (1 s)
constexpr double kMaxKvCapacityTok = 1e12;      // tokens per engine
constexpr double kMaxAbortLatency_s = 1e4;

}  // namespace

// A built-in name, or a path that exists (read, and checked field by field,
// when the scenario is built).
base::KnobValidator builtin_or_file(std::vector<std::string> names) {
  base::KnobValidator v;
  v.accepts = fmt::format("{} or a file path", fmt::join(names, ", "));
  v.check = [names](const base::ConfigValue& value) -> std::optional<std::string> {
    const auto* text = std::get_if<std::string>(&value);
    if (text == nullptr) return std::string("expected a name or a path");
    if (std::find(names.begin(), names.end(), *text) != names.end()) return std::nullopt;
    struct stat st {};
    if (::stat(text->c_str(), &st) == 0) return std::nullopt;
    return fmt::format("'{}' is neither one of {} nor an existing file", *text, fmt::join(names, ", "));
  };
  return v;
}

void declare_engine_knobs(base::ConfigSchema& s) {
  using base::KnobType;
  s.add({keys::kModel.name, KnobType::String, std::string("qwen3-4b"), "",
         "a built-in model (`april model show`) or the path of a Hugging Face config.json or of a folder holding one",
         builtin_or_file(builtin_model_names())});
  s.add({keys::kHardware.name, KnobType::String, std::string("h100"), "",
         "a built-in accelerator (`april hardware show`) or the path of a hardware JSON file",
         builtin_or_file(builtin_accelerator_names())});
  s.add({keys::kClusterGpus.name, KnobType::Int, std::int64_t{8}, "GPUs", "GPUs shared by rollout and training (colocated)",
         base::in_range(1, 1 << 20)});
  s.add({keys::kClusterEngines.name, KnobType::Int, std::int64_t{4}, "engines", "rollout engines", base::in_range(1, 1 << 16)});
  s.add({keys::kClusterTensorParallel.name, KnobType::Int, std::int64_t{2}, "GPUs", "GPUs per engine (tensor parallel)",
         base::in_range(1, 1024)});
  s.add({keys::kClusterExpertParallel.name, KnobType::Int, std::int64_t{1}, "GPUs",
         "MoE models: the engine's GPUs its routed experts are spread over (divides cluster.tensor_parallel; 1 = experts "
         "split by tensor parallelism, all-reduce after each MoE layer; more = all-to-all dispatch and combine)",
         base::in_range(1, 1024)});
  s.add({keys::kEngineWeightDtype.name, KnobType::String, std::string("bf16"), "",
         "engine weights: bf16, or fp8 (half the bytes, matmuls at the accelerator's FP8 peak)", base::one_of({"bf16", "fp8"})});
  s.add({keys::kEngineDpAttention.name,
         KnobType::Bool,
         false,
         "",
         "data-parallel attention (SGLang --enable-dp-attention): each GPU of the engine caches and attends its own "
         "requests, so an MLA latent is not replicated on every GPU",
         {}});
  s.add({keys::kEngineKvDtype.name, KnobType::String, std::string("bf16"), "", "KV cache elements: bf16 or fp8",
         base::one_of({"bf16", "fp8"})});
  // NCCL-tests on 4 x H100 reach an all-reduce bus bandwidth of about 77% of
  // NVLink's one-way figure (nvidia/nccl-tests sweeps published with
  // "Where tensor-parallel inference hits the NVLink wall", 2026).
  s.add({keys::kEngineLinkEfficiency.name, KnobType::Double, 0.77, "", "roofline: achieved fraction of the scale-up link in collectives",
         base::in_range(0.01, 1)});
  // Fitted on serving benchmarks (sim/fitted_defaults.hpp): what a TP engine's
  // decode pays per collective beyond its bytes (the all-reduce kernel's
  // latency, and the work around it that a TP=1 engine does not do).
  s.add({keys::kEngineCollectiveLatencyUs.name, KnobType::Double, fitted::kEngineCollectiveLatencyUs, "us",
         "roofline: fixed cost of each collective of a tensor- or expert-parallel engine (2 all-reduces per layer) per "
         "ring step: a collective of TP t takes t - 1 of them",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({keys::kEngineMaxRunning.name, KnobType::Int, std::int64_t{256}, "requests", "cap on running requests per engine; 0 = no cap",
         base::in_range(0, 1 << 20)});
  s.add({keys::kEngineKvCapacityTok.name, KnobType::Int, std::int64_t{0}, "tok",
         "KV-cache capacity per engine; 0 = from GPU memory, memory fraction and model", base::in_range(0, kMaxKvCapacityTok)});
  s.add({keys::kEngineGpuMemoryFraction.name, KnobType::Double, 0.85, "", "share of GPU memory for weights + KV cache",
         base::in_range(0.05, 1.0)});
  s.add({keys::kEngineIterationModel.name, KnobType::String, std::string("roofline"), "",
         "iteration-time model: roofline, constant, or linear (calibrated by `april calibrate`)",
         base::one_of({"roofline", "constant", "linear"})});
  s.add({keys::kEngineLinearBaseUs.name, KnobType::Double, 0.0, "us", "linear model: fixed cost of an iteration's decode pass",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({keys::kEngineLinearPerRequestUs.name, KnobType::Double, 0.0, "us", "linear model: decode cost per decoding request",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({keys::kEngineLinearPerKvTokNs.name, KnobType::Double, 0.0, "ns", "linear model: decode cost per resident KV token",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({keys::kEngineLinearPrefillBaseUs.name, KnobType::Double, 0.0, "us", "linear model: fixed cost of an iteration's prefill pass",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({keys::kEngineLinearPerPrefillRequestUs.name, KnobType::Double, 0.0, "us",
         "linear model: prefill cost per admitted request, whatever its length", base::in_range(0, kMaxIterationCostUnits)});
  s.add({keys::kEngineLinearPerPrefillTokUs.name, KnobType::Double, 0.0, "us", "linear model: cost per prefilled token",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({keys::kEngineLinearPerPaddedPrefillTokUs.name, KnobType::Double, 0.0, "us",
         "linear model: cost per token of a prefill padded to its longest context (admitted x longest)",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({keys::kEngineConstantIterationUs.name, KnobType::Double, 1000.0, "us", "iteration time of the constant model",
         base::in_range(1e-3, kMaxIterationCostUnits)});
  // Fitted on serving benchmarks (sim/fitted_defaults.hpp, `april components`).
  s.add({keys::kEngineComputeEfficiency.name, KnobType::Double, fitted::kEngineComputeEfficiency, "",
         "roofline: achieved fraction of peak FLOP/s", base::in_range(0.01, 1)});
  s.add({keys::kEngineMoeComputeEfficiency.name, KnobType::Double, fitted::kEngineMoeComputeEfficiency, "",
         "roofline: achieved fraction of peak FLOP/s in the routed experts' grouped GEMMs (MoE models)", base::in_range(0.01, 1)});
  s.add({keys::kEngineMoeHbmShare.name, KnobType::Double, fitted::kEngineMoeHbmShare, "",
         "roofline: the routed experts' weights are read at this share of the dense weights' HBM bandwidth (MoE models)",
         base::in_range(0.05, 2)});
  s.add({keys::kEngineHbmEfficiency.name, KnobType::Double, fitted::kEngineHbmEfficiency, "",
         "roofline: achieved fraction of HBM bandwidth (on an accelerator of engine_hbm_class h20 engine.h20_hbm_efficiency, unless "
         "this key is set)",
         base::in_range(0.01, 1)});
  s.add({keys::kEngineH20HbmEfficiency.name, KnobType::Double, fitted::kEngineH20HbmEfficiency, "",
         "roofline: achieved fraction of HBM bandwidth on an H20 (an accelerator of engine_hbm_class h20: the built-in h20, or a "
         "hardware file naming it), fitted on the H20's own serving rows",
         base::in_range(0.01, 1)});
  s.add({keys::kEngineIterationOverheadUs.name, KnobType::Double, fitted::kEngineIterationOverheadUs, "us",
         "roofline: fixed cost per iteration (scheduling, sampling, launches)", base::in_range(0, kMaxIterationCostUnits)});
  s.add({keys::kEnginePrefill.name, KnobType::String, std::string("batched"), "",
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
  s.add({keys::kEngineAbortLatencyS.name, KnobType::Double, 0.01, "s",
         "abort: from the decision until the engines act on it (they go on generating meanwhile); then each stops at its "
         "next iteration boundary",
         base::in_range(0, kMaxAbortLatency_s)});
  s.add({keys::kEngineAbortPerRequestUs.name, KnobType::Double, 200.0, "us",
         "abort: per request an engine releases (queued or running), one after another on that engine",
         base::in_range(0, kMaxIterationCostUnits)});
  s.add({keys::kEngineSlowdownBesideTrain.name, KnobType::Double, 1.0, "x",
         "disaggregated: engine iterations that start while a train step computes take this many times longer (engines and "
         "trainer sharing a host's cores or memory bandwidth; april validate measures it for the live backend); 1 = separate machines",
         base::in_range(1, 100)});
  s.add({keys::kEngineAbortConfirmS.name, KnobType::Double, 0.0, "s",
         "abort: from the last engine idle until the rollout knows it (engines idle meanwhile): 0 as in the APRIL-era slime, which "
         "awaited the aborted responses; current slime polls each engine's load and retries every 3 s while requests remain",
         base::in_range(0, kMaxAbortLatency_s)});
  s.add({keys::kEngineFastForward.name,
         KnobType::Bool,
         true,
         "",
         "jump over iterations in which the batch cannot change (identical results, far fewer events)",
         {}});
}

EngineLayout engine_layout(const base::Config& c) {
  EngineLayout l;
  l.tensor_parallel = c.get(sim::keys::kClusterTensorParallel);
  l.memory_fraction = c.get(sim::keys::kEngineGpuMemoryFraction);
  l.weight_dtype = dtype_from_string(c.get(sim::keys::kEngineWeightDtype), "engine.weight_dtype");
  l.kv_dtype = dtype_from_string(c.get(sim::keys::kEngineKvDtype), "engine.kv_dtype");
  l.dp_attention = c.get(sim::keys::kEngineDpAttention);
  return l;
}

std::int64_t kv_capacity_tok(const base::Config& c, const ScenarioInputs& in) {
  if (c.get(sim::keys::kEngineKvCapacityTok) > 0) return c.get(sim::keys::kEngineKvCapacityTok);
  const auto& hw = in.engine_hw();
  const auto& model = in.model();
  const auto layout = engine_layout(c);
  const auto mem = engine_memory(model, hw, layout);
  if (!mem.fits()) throw base::ConfigError(does_not_fit(model, hw, layout));
  return std::min<std::int64_t>(mem.kv_capacity_tok, static_cast<std::int64_t>(kMaxKvCapacityTok));
}

std::shared_ptr<const IterationModel> make_iteration_model(const base::Config& c) { return make_iteration_model(c, ScenarioInputs(c)); }

std::shared_ptr<const IterationModel> make_iteration_model(const base::Config& c, const ScenarioInputs& in) {
  if (c.get(sim::keys::kEngineIterationModel) == "linear") {
    LinearIterationParams p;
    p.base_ns = std::llround(c.get(sim::keys::kEngineLinearBaseUs) * 1e3);
    p.per_request_ns = std::llround(c.get(sim::keys::kEngineLinearPerRequestUs) * 1e3);
    p.per_kv_tok_ps = std::llround(c.get(sim::keys::kEngineLinearPerKvTokNs) * 1e3);
    p.prefill_base_ns = std::llround(c.get(sim::keys::kEngineLinearPrefillBaseUs) * 1e3);
    p.per_prefill_request_ns = std::llround(c.get(sim::keys::kEngineLinearPerPrefillRequestUs) * 1e3);
    p.per_prefill_tok_ns = std::llround(c.get(sim::keys::kEngineLinearPerPrefillTokUs) * 1e3);
    p.per_padded_prefill_tok_ns = std::llround(c.get(sim::keys::kEngineLinearPerPaddedPrefillTokUs) * 1e3);
    return std::make_shared<LinearIterationModel>(p);
  }
  if (c.get(sim::keys::kEngineIterationModel) == "constant") {
    return std::make_shared<ConstantIterationModel>(std::llround(c.get(sim::keys::kEngineConstantIterationUs) * 1000.0));
  }
  const auto& model = in.model();
  const auto layout = engine_layout(c);
  RooflineParams p;
  p.compute_efficiency = c.get(sim::keys::kEngineComputeEfficiency);
  p.moe_compute_efficiency = c.get(sim::keys::kEngineMoeComputeEfficiency);
  p.moe_hbm_share = c.get(sim::keys::kEngineMoeHbmShare);
  p.hbm_efficiency = c.get(sim::keys::kEngineHbmEfficiency);
  // The H20's engines read HBM at about half the fraction of its datasheet
  // rate that other accelerators' reach (sim/fitted_defaults.hpp); its class
  // is the accelerator's, so a file for another H20 SKU reads the same.
  if (fitted::uses_h20_hbm_efficiency(in.engine_hw().engine_hbm_class) && !c.is_set(sim::keys::kEngineHbmEfficiency.name))
    p.hbm_efficiency = c.get(sim::keys::kEngineH20HbmEfficiency);
  p.overhead_ns = std::llround(c.get(sim::keys::kEngineIterationOverheadUs) * 1000.0);
  p.tensor_parallel = layout.tensor_parallel;
  p.expert_parallel = c.get(sim::keys::kClusterExpertParallel);
  if (p.tensor_parallel % p.expert_parallel != 0) {
    throw base::ConfigError(
        fmt::format("cluster.expert_parallel {} does not divide cluster.tensor_parallel {}", p.expert_parallel, p.tensor_parallel));
  }
  if (p.expert_parallel > 1 && model.is_moe() && model.routed_experts % p.expert_parallel != 0) {
    throw base::ConfigError(fmt::format("cluster.expert_parallel {} does not divide {}'s {} routed experts", p.expert_parallel, model.name,
                                        model.routed_experts));
  }
  p.weight_dtype = layout.weight_dtype;
  p.kv_dtype = layout.kv_dtype;
  p.dp_attention = layout.dp_attention;
  p.link_efficiency = c.get(sim::keys::kEngineLinkEfficiency);
  p.collective_latency_ns = std::llround(c.get(sim::keys::kEngineCollectiveLatencyUs) * 1000.0);
  return std::make_shared<RooflineIterationModel>(in.engine_hw(), model, p);
}

EngineConfig engine_config(const base::Config& c, const ScenarioInputs& in) {
  EngineConfig e;
  e.max_running = c.get(sim::keys::kEngineMaxRunning);
  e.kv_capacity_tok = kv_capacity_tok(c, in);
  e.fast_forward = c.get(sim::keys::kEngineFastForward);
  e.per_token_prefill = c.get(sim::keys::kEnginePrefill) == "per_token";
  return e;
}

}  // namespace april::sim
