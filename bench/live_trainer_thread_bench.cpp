// What a train step costs on a thread of its own, as an overlapped run's
// trainer has one, against the same step on the main thread; alone and
// beside the engine decoding on the main thread. The arms take turns round
// by round, so the machine's drift falls on each alike; the report gives
// medians, ratios to "main thread, alone" and the minor page faults.
// ARENAS picks glibc malloc's arenas: `one` is april's runtime
// (configure_runtime), `per-thread` glibc's default, where a thread's arena
// unmaps its heaps when they empty. glibc fixes the limit at a thread's first
// arena, so one process measures one setting: run the bench once for each.
// WAVE is how many requests the engine decodes at once beside the step.
// usage: april_live_trainer_bench [SIZE] [SAMPLES] [RESPONSE_TOK] [ROUNDS] [ARENAS] [WAVE]   (default: small 64 22 8 one 32)
#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <map>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "bench/live_train_batch.hpp"
#include "tasks/countdown_task.hpp"

namespace {

using april::live::CountdownTask;
using april::live::TrainSampleData;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string size = argc > 1 ? argv[1] : "small";
  const std::int64_t samples = argc > 2 ? std::atoll(argv[2]) : 64;
  const std::int64_t response_tok = argc > 3 ? std::atoll(argv[3]) : 22;
  const std::int64_t rounds = argc > 4 ? std::atoll(argv[4]) : 8;
  const std::string arenas = argc > 5 ? argv[5] : "one";
  const std::int64_t wave = argc > 6 ? std::atoll(argv[6]) : 32;
  if (samples < 1 || response_tok < 1 || response_tok > 64 || rounds < 1 || (arenas != "one" && arenas != "per-thread") || wave < 1 ||
      wave > 64) {
    fmt::print(stderr,
               "usage: april_live_trainer_bench [SIZE] [SAMPLES >= 1] [RESPONSE_TOK 1..64] [ROUNDS >= 1] [one|per-thread] [WAVE 1..64]\n");
    return 2;
  }
  april::live::configure_runtime(1);
#if defined(__GLIBC__)
  // Above glibc's default limit (8 per core): each new thread makes an arena.
  if (arenas == "per-thread") mallopt(M_ARENA_MAX, 8 * 64);
#endif
  const torch::Device cpu(torch::kCPU);
  const CountdownTask task(april::live::CountdownParams{}, 1);
  const auto cfg = april::live::model_config(size, task.vocab(), task.max_prompt_tok() + 64);
  april::live::GrpoTrainer trainer(april::live::Transformer(cfg), std::nullopt, april::live::GrpoOptions{}, cpu);
  april::live::EngineOptions eo;
  eo.slots = 64, eo.eos.clear(), eo.device = cpu;
  april::live::KvEngine engine(april::live::Transformer(cfg), eo);
  const auto batch = april::bench::filler_batch(samples, response_tok);

  std::uint64_t key = 0;
  // The engine decodes on this thread until `done`: waves of `wave` requests of 48 tokens.
  const auto engine_until = [&](const std::function<bool()>& done) {
    while (!done()) {
      if (engine.running() + engine.waiting() == 0) {
        for (std::int64_t k = 0; k < wave; ++k) engine.add({key++, std::vector<std::int32_t>(8, CountdownTask::kOne), 0, 48, 0});
      }
      engine.step();
    }
    engine.abort_all();
  };
  const auto timed_step = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    trainer.step(batch, 0);
    return seconds_since(t0);
  };
  const auto on_own_thread = [&](bool beside) {
    auto f = std::async(std::launch::async, [&] {
      torch::set_num_threads(1);  // per thread, as the live backend sets it
      return timed_step();
    });
    if (beside) engine_until([&] { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
    return f.get();
  };

  fmt::print("model {}, {} samples up to {} response tokens, {} rounds, 1 torch thread per side, malloc arenas: {}, engine waves of {}\n",
             size, samples, response_tok, rounds, arenas, wave);
  (void)timed_step();  // this shape's first allocations, on no arm's clock
  (void)on_own_thread(false);
  std::map<std::string, std::vector<double>> times;
  const long faults0 = april::bench::minor_faults();
  for (std::int64_t r = 0; r < rounds; ++r) {
    times["main thread, alone"].push_back(timed_step());
    times["own thread, alone"].push_back(on_own_thread(false));
    times["own thread, beside engine"].push_back(on_own_thread(true));
  }
  const long faults = april::bench::minor_faults() - faults0;
  const double base = median(times["main thread, alone"]);
  fmt::print("{:<28} {:>10} {:>16}\n", "train step", "median s", "/ main, alone");
  for (const auto& [name, v] : times) fmt::print("{:<28} {:>10.3f} {:>16.2f}\n", name, median(v), median(v) / base);
  fmt::print("minor page faults over the rounds: {} ({:.0f} per train step)\n", faults,
             static_cast<double>(faults) / static_cast<double>(3 * rounds));
  return 0;
}
