#include "scenario/scenario.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/profiles.hpp"
#include "sim/topology.hpp"
#include "sim/cost_model.hpp"

namespace april::scenario {

using base::Knob;
using base::KnobType;

base::ConfigSchema make_schema(const policies::PolicyRegistry& registry) {
  base::ConfigSchema s;
  auto i = [](std::int64_t v) { return base::ConfigValue{v}; };
  // Run.
  s.add({"seed", KnobType::Int, i(1), "", "seed of every random stream (workload)", base::at_least(0)});
  s.add({"steps", KnobType::Int, i(50), "steps", "training steps to simulate", base::at_least(1)});
  s.add({"rollout_batch_size", KnobType::Int, i(32), "groups", "B: complete groups per training batch", base::at_least(1)});
  s.add({"n_samples_per_prompt", KnobType::Int, i(8), "samples", "n: samples per prompt group (generator)", base::in_range(1, 65536)});
  s.add({"max_response_len", KnobType::Int, i(16384), "tok", "cap on a sample's response; longer ones are truncated",
         base::in_range(1, 1 << 24)});
  s.add({"filter.dynamic_sampling", KnobType::Bool, false, "",
         "reject groups whose samples are all correct or all wrong (DAPO); their tokens are wasted", {}});
  s.add({"filter.keep_when_insufficient", KnobType::Bool, false, "",
         "slime's fallback: keep a rejected group when dropping it would leave fewer than B candidates, "
         "rather than launch another wave", {}});
  s.add({"trace.mode", KnobType::String, std::string("replay"), "",
         "with --trace: replay groups in file order (wrapping), or resample whole groups with the seed",
         base::one_of({"replay", "resample"})});
  // Workload generator.
  s.add({"workload.prompt_median_tok", KnobType::Double, 512.0, "tok", "median prompt length", base::greater_than(0)});
  s.add({"workload.prompt_sigma", KnobType::Double, 0.3, "", "lognormal sigma of prompt lengths", base::at_least(0)});
  s.add({"workload.response_median_tok", KnobType::Double, 1800.0, "tok",
         "median response length of a correct answer to a typical prompt", base::greater_than(0)});
  s.add({"workload.sigma_between", KnobType::Double, 0.6, "", "lognormal sigma of per-prompt medians (between groups)",
         base::at_least(0)});
  s.add({"workload.sigma_within", KnobType::Double, 0.4, "", "lognormal sigma of samples around their prompt's median",
         base::at_least(0)});
  s.add({"workload.incorrect_len_factor", KnobType::Double, 3.0, "", "incorrect answers run this many times longer",
         base::greater_than(0)});
  s.add({"workload.drift_dip", KnobType::Double, 0.0, "", "fraction by which the median length falls until drift_dip_step",
         base::in_range(0, 0.95)});
  s.add({"workload.drift_dip_step", KnobType::Int, i(100), "steps", "step at which the length drift turns", base::at_least(1)});
  s.add({"workload.drift_rise_per_step", KnobType::Double, 0.0, "1/step",
         "after the dip, the median grows by this fraction of the initial median per step", base::at_least(0)});
  // Cluster.
  s.add({"model", KnobType::String, std::string("qwen3-4b"), "", "model profile", base::one_of(sim::model_names())});
  s.add({"hardware", KnobType::String, std::string("h100"), "", "GPU profile", base::one_of(sim::hardware_names())});
  s.add({"cluster.gpus", KnobType::Int, i(8), "GPUs", "GPUs shared by rollout and training (colocated)", base::at_least(1)});
  s.add({"cluster.engines", KnobType::Int, i(4), "engines", "rollout engines", base::at_least(1)});
  s.add({"cluster.tensor_parallel", KnobType::Int, i(2), "GPUs", "GPUs per engine (tensor parallel)", base::at_least(1)});
  // Engine.
  s.add({"engine.max_running", KnobType::Int, i(256), "requests", "cap on running requests per engine; 0 = no cap",
         base::at_least(0)});
  s.add({"engine.kv_capacity_tok", KnobType::Int, i(0), "tok",
         "KV-cache capacity per engine; 0 = from GPU memory, memory fraction and model", base::at_least(0)});
  s.add({"engine.gpu_memory_fraction", KnobType::Double, 0.85, "", "share of GPU memory for weights + KV cache",
         base::in_range(0.05, 1.0)});
  s.add({"engine.iteration_model", KnobType::String, std::string("roofline"), "",
         "iteration-time model: roofline, constant, or linear (calibrated by `april calibrate`)",
         base::one_of({"roofline", "constant", "linear"})});
  s.add({"engine.linear_base_us", KnobType::Double, 0.0, "us", "linear model: fixed cost of an iteration's decode pass", base::at_least(0)});
  s.add({"engine.linear_per_request_us", KnobType::Double, 0.0, "us", "linear model: decode cost per decoding request",
         base::at_least(0)});
  s.add({"engine.linear_per_kv_tok_ns", KnobType::Double, 0.0, "ns", "linear model: decode cost per resident KV token", base::at_least(0)});
  s.add({"engine.linear_prefill_base_us", KnobType::Double, 0.0, "us", "linear model: fixed cost of an iteration's prefill pass",
         base::at_least(0)});
  s.add({"engine.linear_per_prefill_request_us", KnobType::Double, 0.0, "us",
         "linear model: prefill cost per admitted request, whatever its length", base::at_least(0)});
  s.add({"engine.linear_per_prefill_tok_us", KnobType::Double, 0.0, "us", "linear model: cost per prefilled token", base::at_least(0)});
  s.add({"engine.linear_per_padded_prefill_tok_us", KnobType::Double, 0.0, "us",
         "linear model: cost per token of a prefill padded to its longest context (admitted x longest)", base::at_least(0)});
  s.add({"engine.constant_iteration_us", KnobType::Double, 1000.0, "us", "iteration time of the constant model",
         base::greater_than(0)});
  s.add({"engine.compute_efficiency", KnobType::Double, 0.6, "", "roofline: achieved fraction of peak FLOP/s",
         base::in_range(0.01, 1)});
  s.add({"engine.hbm_efficiency", KnobType::Double, 0.8, "", "roofline: achieved fraction of HBM bandwidth",
         base::in_range(0.01, 1)});
  s.add({"engine.iteration_overhead_us", KnobType::Double, 500.0, "us",
         "roofline: fixed cost per iteration (scheduling, sampling, launches)", base::at_least(0)});
  s.add({"engine.prefill", KnobType::String, std::string("batched"), "",
         "batched: admitted contexts are prefilled in one pass that yields their first token; per_token: contexts are fed one "
         "token per decode iteration (`april live` with live.exact_prefill)",
         base::one_of({"batched", "per_token"})});
  s.add({"engine.fast_forward", KnobType::Bool, true, "",
         "jump over iterations in which the batch cannot change (identical results, far fewer events)", {}});
  // Train and sync.
  s.add({"train.time_model", KnobType::String, std::string("flops"), "",
         "flops (6 * params * tokens), linear (calibrated: train.linear_*) or zero", base::one_of({"flops", "linear", "zero"})});
  s.add({"train.linear_base_s", KnobType::Double, 0.0, "s", "linear train model: fixed cost per step", base::at_least(0)});
  s.add({"train.linear_per_tok_us", KnobType::Double, 0.0, "us", "linear train model: cost per trained token (prompt + response)",
         base::at_least(0)});
  s.add({"train.linear_per_padded_tok_us", KnobType::Double, 0.0, "us",
         "linear train model: cost per token of the batch padded to its longest sample (samples x longest)", base::at_least(0)});
  s.add({"train.mfu", KnobType::Double, 0.35, "", "trainer model FLOPs utilisation", base::in_range(0.01, 1)});
  s.add({"train.fixed_s", KnobType::Double, 2.0, "s", "fixed cost per train step (optimizer, offload and onload)",
         base::at_least(0)});
  s.add({"sync.time_model", KnobType::String, std::string("bandwidth"), "",
         "bandwidth (bytes / bandwidth + latency), fixed (sync.latency_s only, e.g. calibrated) or zero",
         base::one_of({"bandwidth", "fixed", "zero"})});
  s.add({"sync.bandwidth_GB_s", KnobType::Double, 100.0, "GB/s", "effective trainer-to-engine weight bandwidth",
         base::greater_than(0)});
  s.add({"topology.preset", KnobType::String, std::string("none"), "",
         "weight-sync topology: none (use sync.bandwidth_GB_s), single-node, two-nodes-ib, separate-racks",
         base::one_of(sim::topology_presets())});
  s.add({"topology.file", KnobType::String, std::string(""), "",
         "a topology JSON file (nodes, links, trainer, engines); overrides topology.preset", {}});
  s.add({"topology.nvlink_GB_s", KnobType::Double, 450.0, "GB/s", "presets: GPU-to-NVSwitch bandwidth, one direction",
         base::greater_than(0)});
  s.add({"topology.node_network_GB_s", KnobType::Double, 400.0, "GB/s",
         "presets: a node's network bandwidth (8 x 400 Gb/s InfiniBand NICs)", base::greater_than(0)});
  s.add({"topology.rack_link_GB_s", KnobType::Double, 12.5, "GB/s", "separate-racks: the inter-rack link (100 Gb/s)",
         base::greater_than(0)});
  s.add({"sync.latency_s", KnobType::Double, 1.0, "s", "fixed cost per weight sync (pause, update, resume)", base::at_least(0)});
  // Live backend (april live): the model, engine, trainer and task.
  s.add({"live.model", KnobType::String, std::string("small"), "", "transformer size: tiny, small (~10M), medium, large",
         base::one_of({"tiny", "small", "medium", "large"})});
  s.add({"live.slots", KnobType::Int, i(64), "requests", "engine slots (running cap); keep >= B' x n to run every request at once",
         base::in_range(1, 4096)});
  s.add({"live.temperature", KnobType::Double, 1.0, "", "sampling temperature; 0 = greedy", base::in_range(0, 10)});
  s.add({"live.top_p", KnobType::Double, 1.0, "", "nucleus sampling mass", base::in_range(0.01, 1)});
  s.add({"live.exact_prefill", KnobType::Bool, true, "",
         "prefill through the decode kernel one token per iteration (bitwise batch- and resume-invariant) instead of one batched forward", {}});
  s.add({"live.lr", KnobType::Double, 5e-4, "", "AdamW learning rate", base::greater_than(0)});
  s.add({"live.weight_decay", KnobType::Double, 0.01, "", "AdamW weight decay", base::at_least(0)});
  s.add({"live.grad_clip", KnobType::Double, 1.0, "", "gradient norm clip", base::greater_than(0)});
  s.add({"live.clip_low", KnobType::Double, 0.2, "", "PPO clip below 1 (DAPO: 0.2)", base::in_range(0, 1)});
  s.add({"live.clip_high", KnobType::Double, 0.28, "", "PPO clip above 1 (DAPO: 0.28)", base::in_range(0, 10)});
  s.add({"live.kl_coef", KnobType::Double, 0.0, "", "KL penalty to the warm-started reference (k3); 0 = none", base::at_least(0)});
  s.add({"live.tis_cap", KnobType::Double, 0.0, "",
         "truncated importance sampling for stale tokens: weight min(pi_old / pi_rollout, C); 0 = off", base::at_least(0)});
  s.add({"live.sft_steps", KnobType::Int, i(300), "steps", "supervised warm-start steps before RL", base::at_least(0)});
  s.add({"live.sft_batch", KnobType::Int, i(32), "examples", "warm-start batch size", base::at_least(1)});
  s.add({"live.threads", KnobType::Int, i(1), "threads",
         "torch intra-op threads (BLAS runs single-threaded); on 2 cores, 1 was faster and steadier than 2", base::in_range(1, 256)});
  s.add({"live.eval_prompts", KnobType::Int, i(64), "prompts", "held-out prompts for greedy accuracy before and after", base::at_least(0)});
  s.add({"live.task_median_len", KnobType::Double, 6.0, "", "countdown task: median start number N (answer: N + 1 tokens)",
         base::at_least(1)});
  s.add({"live.task_sigma", KnobType::Double, 0.7, "", "countdown task: lognormal sigma of N", base::at_least(0)});
  s.add({"live.task_max_len", KnobType::Int, i(32), "", "countdown task: largest N", base::in_range(1, 4096)});
  registry.declare_knobs(s);
  return s;
}

std::vector<BuiltinScenario> builtin_scenarios() {
  return {
      {"default",
       "APRIL paper setting: Qwen3-4B on 8 H100 colocated, 4 engines at TP 2, B = 32, n = 8, alpha 2, max response 16384",
       {}},
      {"handcheck",
       "one engine, 1 ms per iteration, no running cap, zero prefill, train and sync time: results checkable by hand",
       {{"cluster.gpus", "1"},
        {"cluster.engines", "1"},
        {"cluster.tensor_parallel", "1"},
        {"engine.iteration_model", "constant"},
        {"engine.constant_iteration_us", "1000"},
        {"engine.max_running", "0"},
        {"engine.kv_capacity_tok", "1000000000"},
        {"train.time_model", "zero"},
        {"sync.time_model", "zero"},
        {"rollout_batch_size", "4"},
        {"n_samples_per_prompt", "2"},
        {"max_response_len", "100"},
        {"workload.prompt_median_tok", "16"},
        {"workload.response_median_tok", "20"},
        {"steps", "5"}}},
      {"live-cpu",
       "april live on CPU: the countdown task, a ~10M-parameter model warm-started for 8 steps, B = 8 prompts x n = 8, "
       "alpha 2, 30 steps",
       {{"rollout_batch_size", "8"},
        {"n_samples_per_prompt", "8"},
        {"max_response_len", "48"},
        {"april.alpha", "2"},
        {"steps", "30"},
        {"live.sft_steps", "8"},
        {"live.model", "small"},
        {"live.slots", "128"}}},
  };
}

void apply_scenario(base::Config& config, const std::string& name_or_path) {
  for (const auto& b : builtin_scenarios()) {
    if (b.name != name_or_path) continue;
    for (const auto& [k, v] : b.settings) config.set_from_text(k, v, "scenario " + b.name);
    return;
  }
  std::ifstream in(name_or_path, std::ios::binary);
  if (!in) {
    std::vector<std::string> names;
    for (const auto& b : builtin_scenarios()) names.push_back(b.name);
    throw base::ConfigError(fmt::format("{}: no such scenario file, and not a built-in scenario ({})", name_or_path,
                                       fmt::join(names, ", ")));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // "base" names a built-in scenario to start from; read it before the rest.
  try {
    const auto doc = nlohmann::json::parse(text);
    if (doc.is_object() && doc.contains("base")) {
      const auto& base = doc["base"];
      bool known = false;
      for (const auto& b : builtin_scenarios()) known = known || (base.is_string() && b.name == base.get<std::string>());
      if (!known) throw base::ConfigError(fmt::format("{}: key 'base': {} is not a built-in scenario", name_or_path, base.dump()));
      apply_scenario(config, base.get<std::string>());
    }
  } catch (const nlohmann::json::exception&) {
    // load_config_text reports the syntax error with its line.
  }
  base::load_config_text(config, text, name_or_path);
}

std::int64_t kv_capacity_tok(const base::Config& c) {
  if (c.get_int("engine.kv_capacity_tok") > 0) return c.get_int("engine.kv_capacity_tok");
  const auto hw_all = sim::builtin_hardware();
  const auto model_all = sim::builtin_models();
  const auto& hw = sim::find_hardware(hw_all, c.get_string("hardware"));
  const auto& model = sim::find_model(model_all, c.get_string("model"));
  const double tp = static_cast<double>(c.get_int("cluster.tensor_parallel"));
  const double free_bytes = hw.memory_bytes * tp * c.get_double("engine.gpu_memory_fraction") - model.weight_bytes();
  if (free_bytes <= 0) {
    throw base::ConfigError(fmt::format("{} does not fit in {} x {} at engine.gpu_memory_fraction {}", model.name,
                                       c.get_int("cluster.tensor_parallel"), hw.name, c.get_double("engine.gpu_memory_fraction")));
  }
  return static_cast<std::int64_t>(free_bytes / model.kv_bytes_per_token());
}

std::shared_ptr<const sim::IterationModel> make_iteration_model(const base::Config& c) {
  if (c.get_string("engine.iteration_model") == "linear") {
    sim::LinearIterationParams p;
    p.base_ns = std::llround(c.get_double("engine.linear_base_us") * 1e3);
    p.per_request_ns = std::llround(c.get_double("engine.linear_per_request_us") * 1e3);
    p.per_kv_tok_ps = std::llround(c.get_double("engine.linear_per_kv_tok_ns") * 1e3);
    p.prefill_base_ns = std::llround(c.get_double("engine.linear_prefill_base_us") * 1e3);
    p.per_prefill_request_ns = std::llround(c.get_double("engine.linear_per_prefill_request_us") * 1e3);
    p.per_prefill_tok_ns = std::llround(c.get_double("engine.linear_per_prefill_tok_us") * 1e3);
    p.per_padded_prefill_tok_ns = std::llround(c.get_double("engine.linear_per_padded_prefill_tok_us") * 1e3);
    return std::make_shared<sim::LinearIterationModel>(p);
  }
  if (c.get_string("engine.iteration_model") == "constant") {
    return std::make_shared<sim::ConstantIterationModel>(std::llround(c.get_double("engine.constant_iteration_us") * 1000.0));
  }
  const auto hw_all = sim::builtin_hardware();
  const auto model_all = sim::builtin_models();
  sim::RooflineParams p;
  p.compute_efficiency = c.get_double("engine.compute_efficiency");
  p.hbm_efficiency = c.get_double("engine.hbm_efficiency");
  p.overhead_ns = std::llround(c.get_double("engine.iteration_overhead_us") * 1000.0);
  p.tensor_parallel = c.get_int("cluster.tensor_parallel");
  return std::make_shared<sim::RooflineIterationModel>(sim::find_hardware(hw_all, c.get_string("hardware")),
                                                       sim::find_model(model_all, c.get_string("model")), p);
}

std::optional<sim::Topology> scenario_topology(const base::Config& c) {
  if (!c.get_string("topology.file").empty()) return sim::read_topology_file(c.get_string("topology.file"));
  const auto& preset = c.get_string("topology.preset");
  if (preset == "none") return std::nullopt;
  return sim::preset_topology(preset, c.get_int("cluster.engines"), c.get_int("cluster.tensor_parallel"),
                              c.get_double("topology.nvlink_GB_s") * 1e9, c.get_double("topology.node_network_GB_s") * 1e9,
                              c.get_double("topology.rack_link_GB_s") * 1e9);
}

WeightSync weight_sync(const base::Config& c) {
  WeightSync w;
  if (c.get_string("sync.time_model") == "zero") {
    w.how = "zero";
    return w;
  }
  if (c.get_string("sync.time_model") == "fixed") {
    w.time_s = c.get_double("sync.latency_s");
    w.how = fmt::format("fixed {} s", w.time_s);
    return w;
  }
  const auto model_all = sim::builtin_models();
  const auto& model = sim::find_model(model_all, c.get_string("model"));
  const auto topo = scenario_topology(c);
  if (!topo) {
    w.time_s = sim::sync_time_s(model, {c.get_double("sync.bandwidth_GB_s") * 1e9, c.get_double("sync.latency_s")});
    w.how = fmt::format("{:.2f} GB at {} GB/s + {} s", model.weight_bytes() / 1e9, c.get_double("sync.bandwidth_GB_s"),
                        c.get_double("sync.latency_s"));
    return w;
  }
  if (static_cast<std::int64_t>(topo->engines.size()) != c.get_int("cluster.engines")) {
    throw base::ConfigError(fmt::format("topology: {} engines, but cluster.engines is {}", topo->engines.size(),
                                       c.get_int("cluster.engines")));
  }
  sim::SyncPlan plan;
  try {
    plan = sim::plan_weight_sync(*topo, model.weight_bytes());
  } catch (const std::invalid_argument& e) {
    throw base::ConfigError(e.what());
  }
  w.time_s = c.get_double("sync.latency_s") + plan.time_s;
  w.how = fmt::format("tree broadcast over the topology: {:.3f} s on the busiest link ({}) + {} s", plan.time_s,
                      plan.bottleneck.empty() ? "none" : plan.bottleneck, c.get_double("sync.latency_s"));
  return w;
}

void validate_scenario(const base::Config& c, const std::vector<base::GroupSpec>* trace, const std::string& trace_name) {
  (void)weight_sync(c);
  const auto engines = c.get_int("cluster.engines");
  const auto tp = c.get_int("cluster.tensor_parallel");
  const auto gpus = c.get_int("cluster.gpus");
  if (engines * tp > gpus) {
    throw base::ConfigError(fmt::format("cluster.engines ({}) x cluster.tensor_parallel ({}) needs {} GPUs, but cluster.gpus is {}",
                                       engines, tp, engines * tp, gpus));
  }
  const std::int64_t kv = kv_capacity_tok(c);
  const std::int64_t cap = c.get_int("max_response_len");
  if (trace != nullptr) {
    // Every request must fit one engine on its own at its longest.
    const base::GroupSpec* worst = nullptr;
    std::int64_t longest = 0;
    for (const auto& g : *trace) {
      std::int64_t response = 0;
      for (auto t : g.response_tok) response = std::max<std::int64_t>(response, std::min<std::int64_t>(t, cap));
      if (g.prompt_tok + response > longest) {
        longest = g.prompt_tok + response;
        worst = &g;
      }
    }
    if (worst != nullptr && longest > kv) {
      throw base::ConfigError(fmt::format(
          "{}: prompt '{}' needs {} KV tokens ({} prompt + {} response, capped by max_response_len), more than the engine "
          "KV capacity of {} tokens; raise engine.kv_capacity_tok or lower max_response_len",
          trace_name.empty() ? "trace" : trace_name, worst->prompt_id, longest, worst->prompt_tok, longest - worst->prompt_tok, kv));
    }
    return;
  }
  const double longest = c.get_double("workload.prompt_median_tok") * 4 + static_cast<double>(cap);
  if (static_cast<double>(kv) < longest) {
    throw base::ConfigError(fmt::format("engine KV capacity of {} tokens cannot hold one long request (~{:.0f} tokens: 4x "
                                       "workload.prompt_median_tok + max_response_len); raise engine.kv_capacity_tok or lower "
                                       "max_response_len", kv, longest));
  }
}

}  // namespace april::scenario
