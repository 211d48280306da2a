#include "adapters/live/profiler.hpp"

#include <algorithm>
#include <chrono>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/grpo.hpp"
#include "adapters/live/kv_engine.hpp"

namespace april::live {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

adapters::Profile profile_live(const ProfileOptions& o) {
  configure_runtime(o.threads);
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
  eo.eos = -1;  // nothing stops early: lengths are set by max_new
  eo.exact_prefill = false;
  eo.device = device;
  eo.record_iterations = true;
  KvEngine engine(model, eo);
  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  const std::int32_t filler = CountdownTask::kOne;
  const std::int64_t max_ctx = task.max_prompt_tok() + o.max_response_len - 1;  // longest context a resumed sample has
  auto request = [&](std::uint64_t key, std::int64_t context, std::int32_t max_new) {
    std::vector<std::int32_t> ctx = {CountdownTask::kBos};
    ctx.resize(static_cast<std::size_t>(context), filler);
    return GenRequest{key, ctx, 0, max_new, key};
  };
  // The shapes an RL rollout produces: `decoders` requests decoding while
  // `admitted` new ones are prefilled, all of one context length or spread
  // evenly up to the longest (resumed samples), with decode-only iterations
  // between them. Probes ask for one token, so they leave at once.
  std::vector<std::int64_t> decoder_counts, admitted_counts;
  for (std::int64_t d : {std::int64_t{0}, std::int64_t{1}, o.slots / 8, o.slots / 2}) {
    if (decoder_counts.empty() || decoder_counts.back() != d) decoder_counts.push_back(d);
  }
  for (std::int64_t a : {std::int64_t{1}, o.slots / 8, o.slots / 2, o.slots}) {
    if (a >= 1 && (admitted_counts.empty() || admitted_counts.back() != a)) admitted_counts.push_back(a);
  }
  struct Lengths {
    std::int64_t longest;
    bool spread;
  };
  const std::vector<Lengths> lengths = {{3, false}, {std::max<std::int64_t>(3, max_ctx / 2), true}, {max_ctx, true}, {max_ctx, false}};
  const auto decoder_new = static_cast<std::int32_t>(cfg.max_seq - 3);
  std::uint64_t key = 0;
  for (std::int64_t r = 0; r < o.repeats; ++r) {
    for (std::int64_t d : decoder_counts) {
      std::int64_t decoder_left = 0;
      for (std::int64_t a : admitted_counts) {
        if (d + a > o.slots) continue;
        for (const auto& len : lengths) {
          if (d > 0 && decoder_left < 2) {  // (re)start the decoders
            engine.abort_all();
            for (std::int64_t k = 0; k < d; ++k) engine.add(request(key++, 3, decoder_new));
            engine.step();
            decoder_left = decoder_new - 1;
          }
          for (std::int64_t k = 0; k < a; ++k) {
            const std::int64_t ctx = len.spread && a > 1 ? 3 + (len.longest - 3) * k / (a - 1) : len.longest;
            engine.add(request(key++, ctx, 1));
          }
          sync();
          engine.step();
          sync();
          if (d > 0) {
            engine.step();  // decode only
            sync();
            decoder_left -= 2;
          }
        }
      }
      engine.abort_all();
    }
  }
  p.iterations = engine.take_iteration_log();
  // Train steps over batch sizes and response lengths, all of one length or
  // spread evenly up to the longest (the trainer pads to the longest).
  GrpoTrainer trainer(Transformer(cfg), std::nullopt, GrpoOptions{}, device);
  struct TrainShape {
    std::int64_t samples, longest_response;
    bool spread;
  };
  const std::int64_t short_response = std::max<std::int32_t>(1, o.max_response_len / 6);
  const std::vector<TrainShape> train_shapes = {{o.slots / 8, short_response, false},   {o.slots / 8, o.max_response_len, true},
                                                {o.slots / 2, short_response, false},   {o.slots / 2, o.max_response_len, true},
                                                {o.slots / 2, o.max_response_len, false}, {o.slots, o.max_response_len, true}};
  for (std::int64_t r = 0; r < std::max<std::int64_t>(2, o.repeats / 2); ++r) {
    for (const auto& shape : train_shapes) {
      const std::int64_t samples = std::max<std::int64_t>(2, shape.samples);
      std::vector<TrainSampleData> batch;
      adapters::TrainPoint point;
      point.samples = static_cast<double>(samples);
      for (std::int64_t i = 0; i < samples; ++i) {
        const std::int64_t len = shape.spread ? 1 + (shape.longest_response - 1) * i / (samples - 1) : shape.longest_response;
        TrainSampleData s;
        s.prompt = {CountdownTask::kBos, filler, CountdownTask::kSep};
        s.response.assign(static_cast<std::size_t>(len), filler);
        s.rollout_logprobs.assign(static_cast<std::size_t>(len), -1.0F);
        s.token_version.assign(static_cast<std::size_t>(len), 0);
        s.reward = static_cast<double>(i % 2);
        s.group = i / 4;
        point.tokens += static_cast<double>(3 + len);
        point.longest_tok = std::max(point.longest_tok, static_cast<double>(3 + len));
        batch.push_back(std::move(s));
      }
      sync();
      const auto t0 = std::chrono::steady_clock::now();
      trainer.step(batch, 0);
      sync();
      point.time_s = since(t0);
      p.train.push_back(point);
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
