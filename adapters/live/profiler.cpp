#include "adapters/live/profiler.hpp"

#include <chrono>

#include "adapters/live/grpo.hpp"
#include "adapters/live/kv_engine.hpp"

namespace april::live {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

adapters::Profile profile_live(const ProfileOptions& o) {
  torch::set_num_threads(static_cast<int>(std::max<std::int64_t>(1, o.threads)));
  torch::manual_seed(o.seed);
  const torch::Device device = o.device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  if (device.is_cuda() && !torch::cuda::is_available()) throw std::invalid_argument("device 'cuda': no CUDA device");
  const CountdownTask task(o.task, o.seed);
  const auto cfg = model_config(o.model_size, task.vocab(), task.max_prompt_tok() + o.max_response_len);
  adapters::Profile p;
  p.device = device.str();
  p.model = o.model_size;
  p.slots = o.slots;

  Transformer model(cfg);
  EngineOptions eo;
  eo.slots = o.slots;
  eo.eos = -1;  // run every request to max_new: no early exits while timing
  eo.exact_prefill = false;
  eo.device = device;
  KvEngine engine(model, eo);
  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  const std::int32_t filler = CountdownTask::kOne;
  // Decode: a running set of `batch` requests; every step is one point, KV growing.
  std::vector<std::int64_t> batches;
  for (std::int64_t b : {o.slots / 8, o.slots / 4, o.slots / 2, o.slots}) {
    if (b >= 1 && (batches.empty() || batches.back() != b)) batches.push_back(b);
  }
  for (std::int64_t b : batches) {
    for (std::int64_t prompt : {3, 16}) {
      for (std::int64_t k = 0; k < b; ++k) {
        std::vector<std::int32_t> ctx = {CountdownTask::kBos};
        ctx.resize(static_cast<std::size_t>(prompt), filler);
        engine.add({static_cast<std::uint64_t>(k), ctx, 0, static_cast<std::int32_t>(o.repeats + 2), static_cast<std::uint64_t>(k)});
      }
      // The admission step: prefill of b prompts (its first token comes from it).
      sync();
      auto t0 = std::chrono::steady_clock::now();
      engine.step();
      sync();
      p.iterations.push_back({static_cast<double>(b), static_cast<double>(b * prompt), static_cast<double>(b * prompt), since(t0)});
      for (std::int64_t r = 0; r < o.repeats; ++r) {
        const double kv = static_cast<double>(b * (prompt + 1 + r));
        t0 = std::chrono::steady_clock::now();
        engine.step();
        sync();
        p.iterations.push_back({static_cast<double>(b), kv, 0.0, since(t0)});
      }
      engine.abort_all();
    }
  }
  // Train steps over batch sizes (prompt 3 + response 12 tokens per sample).
  GrpoTrainer trainer(Transformer(cfg), std::nullopt, GrpoOptions{}, device);
  for (std::int64_t samples : {8, 32, 64, 128}) {
    std::vector<TrainSampleData> batch;
    for (std::int64_t i = 0; i < samples; ++i) {
      TrainSampleData s;
      s.prompt = {CountdownTask::kBos, filler, CountdownTask::kSep};
      s.response.assign(12, filler);
      s.rollout_logprobs.assign(12, -1.0F);
      s.token_version.assign(12, 0);
      s.reward = static_cast<double>(i % 2);
      s.group = i / 4;
      batch.push_back(std::move(s));
    }
    for (std::int64_t r = 0; r < std::max<std::int64_t>(2, o.repeats / 2); ++r) {
      sync();
      const auto t0 = std::chrono::steady_clock::now();
      trainer.step(batch, 0);
      sync();
      p.train.push_back({static_cast<double>(samples * 15), since(t0)});
    }
  }
  // Weight sync: the engine's copy of the trainer's weights.
  for (std::int64_t r = 0; r < o.repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    copy_weights(trainer.policy(), engine.model());
    sync();
    p.sync_s.push_back(since(t0));
  }
  return p;
}

}  // namespace april::live
