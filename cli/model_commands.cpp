// `april model show` and `april hardware show`: what april derives from a
// model's config.json and an accelerator's figures, and how a model fits an
// engine of a given tensor-parallel size.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/integer_text.hpp"
#include "cli/commands.hpp"
#include "cli/program_exit.hpp"
#include "sim/engine_memory.hpp"
#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"

namespace april::cli {
namespace {

constexpr const char* kModelUsage =
    "usage: april model show NAME|PATH [--json] [--hardware H] [--tp N] [--weight-dtype bf16|fp8] [--memory-fraction F]\n"
    "       april model list\n"
    "  NAME is a built-in model (april model list); PATH a Hugging Face config.json or a folder holding one.\n"
    "  Prints the architecture, total and per-token parameters, weight and KV-cache bytes, FLOPs per token, and\n"
    "  the memory of an engine of each tensor-parallel size on --hardware (default h100) with --memory-fraction\n"
    "  (default 0.85, as engine.gpu_memory_fraction) of each GPU for weights and KV cache; --tp shows one size.\n"
    "  --json prints one object (total_params, active_params, kv_bytes_per_token and weight_bytes in bf16,\n"
    "  architecture, ..., engines).\n";

constexpr const char* kHardwareUsage =
    "usage: april hardware show [NAME|PATH] [--json]\n"
    "  Every built-in accelerator, or one (a built-in name or a hardware JSON file): dense BF16 and FP8 FLOP/s,\n"
    "  HBM capacity and bandwidth, scale-up link and NIC bandwidth per GPU, GPUs per node, and the source.\n"
    "  A hardware file holds: name, description, bf16_dense_TFLOP_s, fp8_dense_TFLOP_s (0: none), hbm_MiB\n"
    "  (the total the driver reports, as nvidia-smi prints it) or hbm_GB (1e9 bytes), hbm_TB_s, scale_up_GB_s\n"
    "  (one direction), gpus_per_node, scale_up_domain_gpus, nic_Gb_s, host_link_GB_s (default 64),\n"
    "  engine_hbm_class (common, the default, or h20: the HBM efficiency fitted on the H20's own serving\n"
    "  benchmarks, engine.h20_hbm_efficiency, for another H20 SKU), source.\n";

struct ShowOptions {
  std::string target;
  bool json = false;
  std::string hardware = "h100";
  std::int64_t tp = 0;  // 0: every power of two up to a node
  sim::DType weight_dtype = sim::DType::BF16;
  double memory_fraction = 0.85;
};

// Strict number parsing: the whole text, in range, or an error naming the option.
double parse_number(const std::string& text, const std::string& option, double lo, double hi) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v >= lo && v <= hi) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(fmt::format("{}: '{}' is not a number in [{}, {}]", option, text, lo, hi));
}

std::int64_t parse_whole(const std::string& text, const std::string& option, std::int64_t lo, std::int64_t hi) {
  const auto reading = base::read_integer(text);
  if (const auto* why = std::get_if<std::string>(&reading)) throw std::invalid_argument(fmt::format("{}: '{}' is {}", option, text, *why));
  const auto v = std::get<std::int64_t>(reading);
  if (v < lo || v > hi) throw std::invalid_argument(fmt::format("{}: '{}' is not in [{}, {}]", option, text, lo, hi));
  return v;
}

ShowOptions parse_show(const std::vector<std::string>& args, std::size_t first) {
  ShowOptions o;
  for (std::size_t i = first; i < args.size(); ++i) {
    const auto& a = args[i];
    const auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw std::invalid_argument(fmt::format("{} needs a value", a));
      return args[++i];
    };
    if (a == "--json")
      o.json = true;
    else if (a == "--hardware")
      o.hardware = value();
    else if (a == "--tp")
      o.tp = parse_whole(value(), "--tp", 1, 1024);
    else if (a == "--weight-dtype")
      o.weight_dtype = sim::dtype_from_string(value(), "--weight-dtype");
    else if (a == "--memory-fraction")
      o.memory_fraction = parse_number(value(), "--memory-fraction", 0.05, 1.0);
    else if (!a.empty() && a[0] == '-')
      throw std::invalid_argument(fmt::format("unknown option '{}'", a));
    else if (o.target.empty())
      o.target = a;
    else
      throw std::invalid_argument(fmt::format("unexpected argument '{}'", a));
  }
  return o;
}

std::string billions(double n) { return fmt::format("{:.2f} B", n / 1e9); }

nlohmann::json engine_json(const sim::ModelArch& m, const sim::Accelerator& hw, const sim::EngineLayout& l) {
  const auto mem = sim::engine_memory(m, hw, l);
  nlohmann::json j = {{"tensor_parallel", l.tensor_parallel},
                      {"weights_per_gpu_bytes", mem.weights_per_gpu_bytes},
                      {"usable_per_gpu_bytes", mem.usable_per_gpu_bytes},
                      {"fits", mem.fits()}};
  if (mem.fits()) {
    j["kv_per_gpu_bytes"] = mem.kv_per_gpu_bytes;
    j["kv_capacity_tok"] = mem.kv_capacity_tok;
  }
  return j;
}

// Powers of two up to a node, then on across nodes until one fits.
std::vector<std::int64_t> layouts(const ShowOptions& o, const sim::ModelArch& m, const sim::Accelerator& hw) {
  if (o.tp > 0) return {o.tp};
  std::vector<std::int64_t> out;
  for (std::int64_t tp = 1; tp <= 1024; tp *= 2) {
    out.push_back(tp);
    const bool fits = sim::engine_memory(m, hw, {tp, o.memory_fraction, o.weight_dtype, sim::DType::BF16}).fits();
    if (tp >= hw.gpus_per_node && fits) break;
  }
  return out;
}

// The published figures when target names a built-in model; nullptr for a file.
const sim::BuiltinModel* published_figures(const std::string& target) {
  const sim::BuiltinModel* published = nullptr;
  for (const auto& b : sim::builtin_model_table()) {
    if (b.name == target) published = &b;
  }
  return published;
}

void print_model_json(const ShowOptions& o, const sim::ModelArch& m, const sim::Accelerator& hw, const sim::BuiltinModel* published) {
  const bool mla = m.attention == sim::AttentionKind::MultiLatent;
  nlohmann::json j = {{"name", m.name},
                      {"architecture", m.architecture},
                      {"model_type", m.model_type},
                      {"source", m.source},
                      {"layers", m.layers},
                      {"hidden_size", m.hidden},
                      {"vocab_size", m.vocab},
                      {"tied_embeddings", m.tied_embeddings},
                      {"attention", mla ? "mla" : "gqa"},
                      {"query_heads", m.q_heads},
                      {"kv_heads", m.kv_heads},
                      {"head_dim", m.head_dim},
                      {"total_params", m.total_params()},
                      {"active_params", m.active_params()},
                      {"mtp_params", m.mtp_params()},
                      {"weight_bytes", m.weight_bytes(sim::DType::BF16)},
                      {"weight_bytes_fp8", m.weight_bytes(sim::DType::FP8)},
                      {"checkpoint_dtype", sim::to_string(m.checkpoint_dtype)},
                      {"kv_bytes_per_token", m.kv_bytes_per_token(sim::DType::BF16)},
                      {"kv_bytes_per_token_fp8", m.kv_bytes_per_token(sim::DType::FP8)},
                      {"linear_flops_per_token", m.linear_flops_per_token()},
                      {"attention_flops_per_context_token", m.attention_flops_per_token(1, true)},
                      {"moe", nullptr}};
  if (mla)
    j["mla"] = {{"q_lora_rank", m.q_lora_rank},
                {"kv_lora_rank", m.kv_lora_rank},
                {"qk_nope_head_dim", m.qk_nope_head_dim},
                {"qk_rope_head_dim", m.qk_rope_head_dim},
                {"v_head_dim", m.v_head_dim}};
  if (m.is_moe()) {
    j["moe"] = {{"routed_experts", m.routed_experts},
                {"experts_per_token", m.experts_per_token},
                {"shared_experts", m.shared_experts},
                {"moe_intermediate_size", m.moe_intermediate},
                {"moe_layers", m.moe_layers()}};
  }
  if (published != nullptr) {
    j["published"] = {{"total_params", published->published_total_params},
                      {"active_params", published->published_active_params},
                      {"citation", published->citation}};
  }
  nlohmann::json engines = nlohmann::json::array();
  for (const auto tp : layouts(o, m, hw)) engines.push_back(engine_json(m, hw, {tp, o.memory_fraction, o.weight_dtype, sim::DType::BF16}));
  j["engines"] = {{"hardware", hw.name},
                  {"memory_fraction", o.memory_fraction},
                  {"weight_dtype", sim::to_string(o.weight_dtype)},
                  {"layouts", engines}};
  fmt::print("{}\n", j.dump(2));
}

void print_model_text(const sim::ModelArch& m, const sim::BuiltinModel* published) {
  const bool mla = m.attention == sim::AttentionKind::MultiLatent;
  fmt::print("{}  {} ({})\n  source: {}\n", m.name, m.architecture, m.model_type, m.source);
  fmt::print("  {} layers, hidden {}, vocabulary {}, {} embeddings\n", m.layers, m.hidden, m.vocab, m.tied_embeddings ? "tied" : "untied");
  if (mla) {
    fmt::print("  attention: MLA, {} heads, q_lora_rank {}, kv_lora_rank {}, qk {}+{} (nope+rope), v {}\n", m.q_heads, m.q_lora_rank,
               m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim);
  } else {
    fmt::print("  attention: grouped-query, {} query / {} KV heads of {}{}{}\n", m.q_heads, m.kv_heads, m.head_dim,
               m.qkv_bias ? ", q/k/v biases" : "", m.qk_norm ? ", q/k norms" : "");
  }
  if (m.is_moe()) {
    fmt::print("  experts: {} routed, {} per token, {} shared, intermediate {}; {} of {} layers MoE\n", m.routed_experts,
               m.experts_per_token, m.shared_experts, m.moe_intermediate, m.moe_layers(), m.layers);
  } else {
    fmt::print("  MLP: dense, intermediate {}\n", m.intermediate);
  }
  fmt::print("  parameters: {} total ({}), {} activated per token ({})", m.total_params(), billions(static_cast<double>(m.total_params())),
             m.active_params(), billions(static_cast<double>(m.active_params())));
  if (published != nullptr) {
    fmt::print("; published {} / {}", billions(published->published_total_params), billions(published->published_active_params));
  }
  fmt::print("\n");
  if (m.mtp_params() > 0)
    fmt::print("  multi-token prediction modules (apart): {} ({})\n", m.mtp_params(), billions(static_cast<double>(m.mtp_params())));
  fmt::print("  weights: {:.2f} GB bf16, {:.2f} GB fp8 (checkpoint: {})\n", m.weight_bytes(sim::DType::BF16) / 1e9,
             m.weight_bytes(sim::DType::FP8) / 1e9, sim::to_string(m.checkpoint_dtype));
  fmt::print("  KV cache: {} B per token bf16 ({} B fp8){}\n", m.kv_bytes_per_token(sim::DType::BF16),
             m.kv_bytes_per_token(sim::DType::FP8), mla ? ", the latent and rope key" : "");
  fmt::print("  FLOPs per token: {:.3f} GFLOP in linear layers, {:.1f} kFLOP of attention per cached token{}\n",
             m.linear_flops_per_token() / 1e9, m.attention_flops_per_token(1, true) / 1e3, mla ? " (absorbed MLA)" : "");
}

void print_engines_text(const ShowOptions& o, const sim::ModelArch& m, const sim::Accelerator& hw) {
  fmt::print("\n  engines on {} ({:.0f} MiB = {:.1f} GB per GPU, {} of it for weights + KV cache, {} weights):\n", hw.name,
             hw.hbm_bytes / sim::kBytesPerMiB, hw.hbm_bytes / 1e9, o.memory_fraction, sim::to_string(o.weight_dtype));
  fmt::print("  {:>4}  {:>14}  {:>12}  {:>16}\n", "TP", "weights/GPU", "KV/GPU", "KV capacity");
  for (const auto tp : layouts(o, m, hw)) {
    const auto mem = sim::engine_memory(m, hw, {tp, o.memory_fraction, o.weight_dtype, sim::DType::BF16});
    if (mem.fits()) {
      fmt::print("  {:>4}  {:>11.2f} GB  {:>9.2f} GB  {:>12} tok\n", tp, mem.weights_per_gpu_bytes / 1e9, mem.kv_per_gpu_bytes / 1e9,
                 mem.kv_capacity_tok);
    } else {
      fmt::print("  {:>4}  {:>11.2f} GB  does not fit ({:.2f} GB usable)\n", tp, mem.weights_per_gpu_bytes / 1e9,
                 mem.usable_per_gpu_bytes / 1e9);
    }
  }
}

int model_show(const ShowOptions& o) {
  const auto m = sim::resolve_model(o.target);
  const auto hw = sim::resolve_accelerator(o.hardware);
  const auto* published = published_figures(o.target);
  if (o.json) {
    print_model_json(o, m, hw, published);
    return 0;
  }
  print_model_text(m, published);
  print_engines_text(o, m, hw);
  return 0;
}

nlohmann::json accelerator_json(const sim::Accelerator& a) {
  return {{"name", a.name},
          {"description", a.description},
          {"bf16_dense_TFLOP_s", a.bf16_flop_s / 1e12},
          {"fp8_dense_TFLOP_s", a.fp8_flop_s / 1e12},
          {"hbm_MiB", a.hbm_bytes / sim::kBytesPerMiB},
          {"hbm_TB_s", a.hbm_bytes_s / 1e12},
          {"scale_up_GB_s", a.scale_up_bytes_s / 1e9},
          {"gpus_per_node", a.gpus_per_node},
          {"scale_up_domain_gpus", a.scale_up_domain_gpus},
          {"nic_Gb_s", a.nic_bytes_s * 8 / 1e9},
          {"host_link_GB_s", a.host_link_bytes_s / 1e9},
          {"engine_hbm_class", a.engine_hbm_class},
          {"source", a.source}};
}

}  // namespace

int model_command(const std::vector<std::string>& args) {
  const bool help = std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
  if (help) {
    fmt::print("{}", kModelUsage);
    return 0;
  }
  if (args.size() == 1 && args[0] == "list") {
    for (const auto& b : sim::builtin_model_table()) {
      const auto m = sim::resolve_model(b.name);
      fmt::print("  {:<22} {:<24} {:>9} total {:>9} active\n", b.name, m.architecture, billions(static_cast<double>(m.total_params())),
                 billions(static_cast<double>(m.active_params())));
    }
    return 0;
  }
  if (args.empty() || args[0] != "show") {
    print_error(fmt::format("april model: expected 'show' or 'list'\n{}", kModelUsage));
    return 2;
  }
  const auto o = parse_show(args, 1);
  if (o.target.empty()) throw std::invalid_argument(fmt::format("model show: missing NAME|PATH\n{}", kModelUsage));
  return model_show(o);
}

int hardware_command(const std::vector<std::string>& args) {
  const bool help = std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
  if (help) {
    fmt::print("{}", kHardwareUsage);
    return 0;
  }
  if (args.empty() || args[0] != "show") {
    print_error(fmt::format("april hardware: expected 'show'\n{}", kHardwareUsage));
    return 2;
  }
  bool json = false;
  std::string target;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--json")
      json = true;
    else if (!args[i].empty() && args[i][0] == '-')
      throw std::invalid_argument(fmt::format("unknown option '{}'", args[i]));
    else if (target.empty())
      target = args[i];
    else
      throw std::invalid_argument(fmt::format("unexpected argument '{}'", args[i]));
  }
  std::vector<sim::Accelerator> shown;
  if (target.empty())
    shown = sim::builtin_accelerators();
  else
    shown.push_back(sim::resolve_accelerator(target));
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& a : shown) j.push_back(accelerator_json(a));
    fmt::print("{}\n", (target.empty() ? j : j[0]).dump(2));
    return 0;
  }
  fmt::print("{:<8} {:>10} {:>10} {:>8} {:>8} {:>10} {:>5} {:>6} {:>8}\n", "name", "BF16 TF/s", "FP8 TF/s", "HBM MiB", "HBM TB/s",
             "link GB/s", "node", "domain", "NIC Gb/s");
  for (const auto& a : shown) {
    fmt::print("{:<8} {:>10.1f} {:>10.1f} {:>8.0f} {:>8.2f} {:>10.0f} {:>5} {:>6} {:>8.0f}\n", a.name, a.bf16_flop_s / 1e12,
               a.fp8_flop_s / 1e12, a.hbm_bytes / sim::kBytesPerMiB, a.hbm_bytes_s / 1e12, a.scale_up_bytes_s / 1e9, a.gpus_per_node,
               a.scale_up_domain_gpus, a.nic_bytes_s * 8 / 1e9);
  }
  fmt::print(
      "\nFLOP/s dense (datasheets often quote 2:4-sparse figures, twice these); link = scale-up (NVLink / Infinity Fabric)\n"
      "per GPU, one direction (vendors add both); HBM = the total the driver reports (nvidia-smi, rocm-smi), which\n"
      "frameworks take their memory fraction of (datasheets round it: an \"80 GB\" H100 reports 81,559 MiB);\n"
      "node = GPUs per node; domain = GPUs one scale-up fabric joins.\n\n");
  for (const auto& a : shown) fmt::print("{}: {}\n  {}\n", a.name, a.description, a.source);
  return 0;
}

}  // namespace april::cli
