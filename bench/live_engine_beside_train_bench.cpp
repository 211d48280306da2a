// How much a train step on its own thread slows the engine's iterations
// beside it, by what ran just before. `april validate` measures the slowdown
// with the profiler's side-by-side probe (the engine warm from a rollout
// wave, the trainer from its last step) and runs every policy's live arm in
// turn, so that an overlapped arm's step starts after other arms' engines and
// trainers have run: the live iterations beside a train step ran slower than
// the probe's (x1.08-1.10 against x1.03-1.04 in sum, 2026-11-24). This bench
// times one wave of fresh prompts (one prefill, then decodes as the wave
// thins out) beside a train step, against the same wave alone, in the same
// round:
// - warm:        as the profiler's probe: the same engine's wave alone just before;
// - weight copy: the trainer's weights copied into the engine first, as an overlapped step's sync does;
// - other arm:   a second engine and trainer (another policy's arm) run a wave and a train step first, then the copy;
// and prints, per condition, the slowdown of the wave's first iteration, of
// the next four, and of all the iterations that began while the step computed.
// usage: april_live_engine_beside_train_bench [SIZE] [ROUNDS]   (default: small 6)
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

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "adapters/live/detail/transformer.hpp"
#include "adapters/live/detail/worker_thread.hpp"
#include "tasks/countdown_task.hpp"

namespace {

using april::live::CountdownTask;

constexpr std::int64_t kSlots = 128, kWave = 64;

// One policy's arm: its engine, its trainer and the trainer's thread.
struct Arm {
  april::live::KvEngine engine;
  april::live::GrpoTrainer trainer;
  april::live::WorkerThread worker{[] { april::live::configure_thread(1); }};

  static april::live::KvEngine make_engine(const april::live::ModelConfig& cfg) {
    april::live::EngineOptions eo;
    eo.slots = kSlots;
    eo.eos.clear();  // lengths set by max_new
    eo.exact_prefill = false;
    eo.record_iterations = true;
    return april::live::KvEngine(april::live::Transformer(cfg), eo);
  }
  explicit Arm(const april::live::ModelConfig& cfg)
      : engine(make_engine(cfg)), trainer(april::live::Transformer(cfg), std::nullopt, april::live::GrpoOptions{}, torch::kCPU) {}
};

struct Wave {
  std::vector<std::int32_t> prompt_len, answer_len;
};

Wave draw_wave(const CountdownTask& task, std::int64_t first) {
  Wave w;
  for (std::int64_t k = 0; k < kWave; ++k) {
    const auto ex = task.example(first + k);
    w.prompt_len.push_back(static_cast<std::int32_t>(ex.prompt.size()));
    w.answer_len.push_back(std::max<std::int32_t>(1, static_cast<std::int32_t>(ex.answer.size())));
  }
  return w;
}

std::vector<april::live::TrainSampleData> train_batch(const Wave& w) {
  std::vector<april::live::TrainSampleData> batch;
  for (std::size_t i = 0; i < w.answer_len.size(); ++i) {
    batch.push_back(april::live::filler_sample({CountdownTask::kBos, CountdownTask::kOne, CountdownTask::kSep}, CountdownTask::kOne,
                                               static_cast<std::size_t>(w.answer_len[i]), static_cast<double>(i % 2),
                                               static_cast<std::int64_t>(i / 8)));
  }
  return batch;
}

// Runs the wave to its end; the iterations' times, and how many began while
// a train step still computed (`computing`, if given).
struct WaveTimes {
  std::vector<double> time_s;
  std::size_t beside = 0;
};

WaveTimes run_wave(Arm& arm, const Wave& w, std::uint64_t& key, const std::function<bool()>& computing = {}) {
  for (std::size_t k = 0; k < w.answer_len.size(); ++k) {
    std::vector<std::int32_t> ctx = {CountdownTask::kBos};
    ctx.resize(static_cast<std::size_t>(std::max(1, w.prompt_len[k])), CountdownTask::kOne);
    arm.engine.add({key, ctx, 0, w.answer_len[k], key});
    ++key;
  }
  WaveTimes out;
  while (arm.engine.running() + arm.engine.waiting() > 0) {
    if (computing && computing()) ++out.beside;
    (void)arm.engine.step();
  }
  for (const auto& it : arm.engine.take_iteration_log()) out.time_s.push_back(it.time_s);
  return out;
}

void train_alone(Arm& arm, const std::vector<april::live::TrainSampleData>& batch) {
  auto f = arm.worker.run([&] { arm.trainer.step(batch, 0); });
  april::live::wait_in_slices(f);
  f.get();
}

WaveTimes wave_beside_train(Arm& arm, const Wave& w, const std::vector<april::live::TrainSampleData>& batch, std::uint64_t& key) {
  auto f = arm.worker.run([&] { arm.trainer.step(batch, 0); });
  auto times = run_wave(arm, w, key, [&f] { return f.wait_for(std::chrono::seconds(0)) != std::future_status::ready; });
  april::live::wait_in_slices(f);
  f.get();
  return times;
}

// Sums of beside / alone over iteration ranges [0,1), [1,5), and all those begun beside the step.
struct Ratios {
  double first[2]{}, next[2]{}, all[2]{};
  void add(const WaveTimes& beside, const WaveTimes& alone) {
    const std::size_t n = std::min({beside.beside, beside.time_s.size(), alone.time_s.size()});
    for (std::size_t i = 0; i < n; ++i) {
      double* bucket = i == 0 ? first : i < 5 ? next : nullptr;
      if (bucket != nullptr) bucket[0] += beside.time_s[i], bucket[1] += alone.time_s[i];
      all[0] += beside.time_s[i], all[1] += alone.time_s[i];
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string size = argc > 1 ? argv[1] : "small";
  const std::int64_t rounds = argc > 2 ? std::atoll(argv[2]) : 6;
  if (rounds < 1) {
    fmt::print(stderr, "usage: april_live_engine_beside_train_bench [SIZE] [ROUNDS >= 1]\n");
    return 2;
  }
  april::live::configure_runtime(1);
  torch::manual_seed(1);
  const CountdownTask task(april::live::CountdownParams{}, 1);
  const auto cfg = april::live::model_config(size, task.vocab(), task.max_prompt_tok() + 48);
  Arm a(cfg), b(cfg);
  std::uint64_t key = 0;
  std::map<std::string, Ratios> ratios;
  const std::vector<std::string> order = {"warm", "weight copy", "other arm", "other, no copy", "other, alone"};
  // One untimed round: first shapes allocate.
  {
    const Wave w = draw_wave(task, 0);
    const auto batch = train_batch(w);
    (void)run_wave(a, w, key);
    (void)run_wave(b, w, key);
    train_alone(a, batch);
    train_alone(b, batch);
  }
  for (std::int64_t r = 0; r < rounds; ++r) {
    const Wave w = draw_wave(task, 1000 * (r + 1));
    const auto batch = train_batch(w);
    const WaveTimes alone = run_wave(a, w, key);
    ratios["warm"].add(wave_beside_train(a, w, batch, key), alone);
    (void)run_wave(a, w, key);
    april::live::copy_weights(a.trainer.policy(), a.engine.model());
    ratios["weight copy"].add(wave_beside_train(a, w, batch, key), alone);
    (void)run_wave(b, w, key);
    train_alone(b, batch);
    april::live::copy_weights(a.trainer.policy(), a.engine.model());
    ratios["other arm"].add(wave_beside_train(a, w, batch, key), alone);
    (void)run_wave(b, w, key);
    train_alone(b, batch);
    ratios["other, no copy"].add(wave_beside_train(a, w, batch, key), alone);
    (void)run_wave(b, w, key);
    train_alone(b, batch);
    WaveTimes cold = run_wave(a, w, key);
    cold.beside = cold.time_s.size();
    ratios["other, alone"].add(cold, alone);
  }
  fmt::print("model {}, waves of {} prompts on {} slots, {} rounds: engine time beside a train step / the same iterations alone\n", size,
             kWave, kSlots, rounds);
  fmt::print("{:>12} {:>12} {:>12} {:>14}\n", "before", "iteration 0", "1-4", "all beside");
  for (const auto& name : order) {
    const Ratios& q = ratios[name];
    fmt::print("{:>12} {:>12.3f} {:>12.3f} {:>14.3f}\n", name, q.first[0] / q.first[1], q.next[0] / q.next[1], q.all[0] / q.all[1]);
  }
  return 0;
}
