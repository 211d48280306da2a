#include "adapters/live/generate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "adapters/live/detail/device.hpp"
#include "adapters/live/detail/hf_checkpoint.hpp"
#include "base/rng.hpp"

namespace april::live {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The next token from one row of logits: the arg max, or a draw from
// softmax(logits / temperature) by inverting its CDF in float64 with april's
// own generator, so that a seed gives the same tokens on any device.
std::int64_t choose(const torch::Tensor& logits_row, const GenerateRequest& r, base::Rng& rng) {
  if (r.greedy) return logits_row.argmax().item<std::int64_t>();
  const auto p = torch::softmax(logits_row.to(torch::kCPU, torch::kFloat64) / r.temperature, -1).contiguous();
  const double* q = p.data_ptr<double>();
  const double u = rng.uniform01();
  double acc = 0;
  for (std::int64_t i = 0; i < p.size(0); ++i) {
    acc += q[i];
    if (u < acc) return i;
  }
  return p.size(0) - 1;
}

}  // namespace

GenerateResult generate(const GenerateRequest& r) {
  if (r.prompt_ids.empty()) throw std::invalid_argument("an empty prompt: give at least one token");
  if (r.max_new_tokens < 1) throw std::invalid_argument("max_new_tokens must be at least 1");
  if (!r.greedy && !(r.temperature > 0)) throw std::invalid_argument("the sampling temperature must be > 0 (or generate greedily)");
  if (r.dtype != "float32" && r.dtype != "bfloat16") throw std::invalid_argument(fmt::format("dtype '{}': float32 or bfloat16", r.dtype));
  const auto device = parse_device(r.device);
  const auto t_load = std::chrono::steady_clock::now();
  const auto max_seq = static_cast<std::int64_t>(r.prompt_ids.size()) + r.max_new_tokens;
  // The model's positions bound the generation: past them a model has no
  // trained position (and the cache would be sized by the flag alone).
  const auto positions = read_hf_config(r.checkpoint_dir).max_position_embeddings;
  if (positions > 0 && max_seq > positions) {
    throw std::invalid_argument(
        fmt::format("{} prompt tokens and --max-new-tokens {} are {} positions, past the model's max_position_embeddings of {}",
                    r.prompt_ids.size(), r.max_new_tokens, max_seq, positions));
  }
  auto ck = load_hf_checkpoint(r.checkpoint_dir, max_seq, device, r.dtype == "bfloat16" ? torch::kBFloat16 : torch::kFloat32);
  GenerateResult out;
  out.load_s = seconds_since(t_load);
  out.parameters = ck.config.model.parameters();
  out.architecture = ck.config.model.architecture;
  const auto vocab = ck.config.model.vocab;
  for (const auto id : r.prompt_ids) {
    if (id < 0 || id >= vocab)
      throw std::invalid_argument(fmt::format("prompt token {} is outside the model's vocabulary [0, {})", id, vocab));
  }
  torch::NoGradGuard no_grad;
  auto& model = ck.model;
  model->eval();
  auto cache = model->make_cache(1, device, r.dtype == "bfloat16" ? torch::kBFloat16 : torch::kFloat32);
  const auto longs = torch::TensorOptions().dtype(torch::kLong).device(device);
  const auto n = static_cast<std::int64_t>(r.prompt_ids.size());
  base::Rng rng(r.seed, "generate.sample");
  const auto t_prefill = std::chrono::steady_clock::now();
  auto logits = model->prefill(torch::tensor(r.prompt_ids, torch::kLong).view({1, n}).to(device), torch::full({1}, n, longs),
                               torch::zeros({1}, longs), cache)[0];
  out.prefill_s = seconds_since(t_prefill);
  const auto t_decode = std::chrono::steady_clock::now();
  out.finish_reason = "length";
  for (std::int64_t i = 0; i < r.max_new_tokens; ++i) {
    const auto row = logits.to(torch::kFloat32);
    const auto tok = choose(row, r, rng);
    out.output_ids.push_back(tok);
    out.output_logprobs.push_back(static_cast<float>(torch::log_softmax(row.to(torch::kFloat64), -1)[tok].item<double>()));
    const auto& eos = ck.config.eos_token_ids;
    if (r.stop_at_eos && std::find(eos.begin(), eos.end(), tok) != eos.end()) {
      out.finish_reason = "eos";
      break;
    }
    if (i + 1 == r.max_new_tokens) break;
    logits = model->decode(torch::full({1}, tok, longs), torch::full({1}, n + i, longs), cache)[0];
  }
  out.decode_s = seconds_since(t_decode);
  return out;
}

}  // namespace april::live
