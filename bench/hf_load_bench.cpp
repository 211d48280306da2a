// A real-sized Hugging Face checkpoint through the live backend: writes a
// random-weight bf16 checkpoint of a config's shape (e.g. Qwen3-0.6B's, 28
// layers), then, in a fresh process, loads it and decodes, reporting the load
// time, decode tokens/s and the process's peak RSS against the weight files'
// size (the loader copies each tensor out of the mapped file and drops its
// pages, so the weights are held once).
//
// usage: april_hf_load_bench write DIR CONFIG.json
//        april_hf_load_bench load DIR [cpu|cuda] [bfloat16|float32] [NEW_TOKENS]
#include <fmt/format.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "adapters/live/detail/hf_checkpoint.hpp"
#include "adapters/live/generate.hpp"
#include "base/atomic_file.hpp"

namespace {

namespace fs = std::filesystem;
using namespace april::live;

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;  // Linux reports KiB
}

int write_checkpoint(const std::string& dir, const std::string& config) {
  if (fs::exists(dir)) {
    std::fprintf(stderr, "%s exists: the bench writes a new folder only\n", dir.c_str());
    return 2;
  }
  const auto staging = april::base::staging_directory_for(dir);
  fs::copy_file(config, fs::path(staging) / "config.json");
  const auto hf = read_hf_config(staging);
  auto cfg = hf.model;
  cfg.max_seq = 2;
  torch::manual_seed(1);
  Transformer model(cfg, torch::kBFloat16);
  {
    // Embeddings at a trained model's scale (std 0.02, as transformers
    // initialises them): at libtorch's N(0, 1), a tied head scores the last
    // input token so far above the rest that every model repeats it.
    torch::NoGradGuard no_grad;
    model->named_parameters()["embed.weight"].mul_(0.02);
  }
  save_hf_checkpoint(model, staging, staging, HfSaveOptions{StDtype::BF16, 5'000'000'000});
  fs::rename(staging, dir);
  std::printf("wrote %s: %s, %.1fM parameters, bf16\n", dir.c_str(), cfg.architecture.c_str(), static_cast<double>(cfg.parameters()) / 1e6);
  return 0;
}

int load_and_decode(const std::string& dir, const std::string& device, const std::string& dtype, std::int64_t new_tokens) {
  GenerateRequest r;
  r.checkpoint_dir = dir;
  r.prompt_ids = {9707, 11, 1246, 525, 498, 30, 358, 1079, 264, 1273, 315, 279, 1614, 13, 576, 4226};
  r.max_new_tokens = new_tokens;
  r.greedy = true;
  r.stop_at_eos = false;
  r.device = device;
  r.dtype = dtype;
  const auto g = generate(r);
  double file_bytes = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".safetensors") file_bytes += static_cast<double>(e.file_size());
  }
  const double rss = peak_rss_bytes();
  std::printf("%s on %s, %s engine: %.1fM parameters, weight files %.3f GB\n", g.architecture.c_str(), device.c_str(), dtype.c_str(),
              static_cast<double>(g.parameters) / 1e6, file_bytes / 1e9);
  std::printf("load %.2f s; prefill of %zu tokens %.3f s; decode %lld tokens at %.1f tok/s (batch 1)\n", g.load_s, r.prompt_ids.size(),
              g.prefill_s, static_cast<long long>(g.output_ids.size()), static_cast<double>(g.output_ids.size() - 1) / g.decode_s);
  std::printf("peak RSS %.3f GB = %.2fx the weight files\n", rss / 1e9, rss / file_bytes);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "write" && argc == 4) return write_checkpoint(argv[2], argv[3]);
    if (mode == "load" && argc >= 3) {
      return load_and_decode(argv[2], argc > 3 ? argv[3] : "cpu", argc > 4 ? argv[4] : "bfloat16", argc > 5 ? std::stoll(argv[5]) : 32);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::fprintf(
      stderr,
      "usage: april_hf_load_bench write DIR CONFIG.json\n       april_hf_load_bench load DIR [cpu|cuda] [bfloat16|float32] [NEW_TOKENS]\n");
  return 2;
}
