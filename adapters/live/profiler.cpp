#include "adapters/live/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <optional>
#include <set>
#include <vector>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/device.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "adapters/live/detail/worker_thread.hpp"
#include "base/stats.hpp"

namespace april::live {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One probe: an admission of `admitted` requests among `decoders` running
// ones (then one decode-only iteration when decoders > 0), a train step, a
// weight copy, an abort of `admitted` running requests, or a train step
// beside the engine rolling out waves of `decoders` requests.
struct Probe {
  enum Kind { kIteration, kTrain, kSync, kAbort, kContention } kind;
  std::int64_t decoders = 0, admitted = 0;  // iteration, abort
  std::int64_t samples = 0;                 // train
  std::int64_t longest = 0;                 // context (iteration) or response (train) tokens
  bool spread = false;                      // lengths spread evenly up to the longest, else all the longest
  bool task_lengths = false;                // train: a live batch (the task's answer lengths, or a live run's own)
};

}  // namespace

struct LiveProfiler::Impl {
  ProfileOptions o;
  torch::Device device;
  CountdownTask task;
  ModelConfig cfg;
  KvEngine engine;
  GrpoTrainer trainer;
  std::vector<Probe> probes;
  std::size_t next = 0;
  std::uint64_t key = 0;
  // Task examples drawn for train batches: indices far from the engine's keys.
  static constexpr std::int64_t kTrainDrawBase = std::int64_t{1} << 40;
  std::int64_t train_draws = 0;
  // Live batches' response lengths, taken in turn (use_live_batches).
  std::vector<std::vector<std::int32_t>> live_batches;
  std::size_t live_batch_uses = 0;
  std::int64_t running_decoders = 0, decoder_left = 0;
  rl::Profile measured;
  // Another policy's arm (contention_after_other_arm): its engine, its
  // trainer and the trainer's thread (last: joined before the trainer goes).
  struct OtherArm {
    KvEngine engine;
    GrpoTrainer trainer;
    WorkerThread worker;
  };
  std::unique_ptr<OtherArm> other;
  // The trainer's own thread, idle between steps, as an overlapped live run
  // has it (LiveBackend). Last: joined before the trainer and engine go.
  WorkerThread worker{[threads = o.threads] { configure_thread(threads); }};

  static constexpr std::int32_t kFiller = CountdownTask::kOne;

  Impl(const ProfileOptions& options, torch::Device dev, const ModelConfig& config)
      : o(options),
        device(dev),
        task(options.task, options.seed),
        cfg(config),
        engine(make_engine(cfg, options, dev)),
        trainer(Transformer(cfg), std::nullopt, GrpoOptions{}, dev) {
    measured.device = device.str();
    measured.model = o.model_size;
    measured.slots = o.slots;
    measured.side_by_side_after_other_arm = o.contention_after_other_arm;
    if (o.contention_after_other_arm) {
      other =
          std::unique_ptr<OtherArm>(new OtherArm{make_engine(cfg, o, dev), GrpoTrainer(Transformer(cfg), std::nullopt, GrpoOptions{}, dev),
                                                 WorkerThread{[threads = o.threads] { configure_thread(threads); }}});
    }
    build_probes();
  }

  static KvEngine make_engine(const ModelConfig& c, const ProfileOptions& o, torch::Device dev) {
    Transformer model(c);
    EngineOptions eo;
    apply_serving(o.serving, eo, model);  // as the live engine serves
    eo.slots = o.slots;
    eo.eos = {};  // nothing stops early: lengths are set by max_new
    eo.exact_prefill = false;
    eo.device = dev;
    eo.record_iterations = true;
    return KvEngine(model, eo);
  }

  // Prompts per rollout wave, before a timed train step and beside one (the
  // side-by-side probes): half the slots.
  [[nodiscard]] std::int64_t wave_requests() const { return std::max<std::int64_t>(1, o.slots / 2); }

  void build_probes() {
    const std::int64_t max_ctx = task.max_prompt_tok() + o.max_response_len - 1;  // longest context a resumed sample has
    // Up to nearly all slots decoding: a decode's per-request cost is small
    // beside its fixed cost, and only a wide range of batches pins it down.
    // (Sets: with few slots some of these counts coincide.)
    const std::set<std::int64_t> decoder_counts = {0, 1, o.slots / 8, o.slots / 2, o.slots - o.slots / 8};
    std::set<std::int64_t> admitted_counts = {1, o.slots / 8, o.slots / 2, o.slots};
    admitted_counts.erase(0);
    const std::vector<std::pair<std::int64_t, bool>> lengths = {
        {3, false}, {std::max<std::int64_t>(3, max_ctx / 2), true}, {max_ctx, true}, {max_ctx, false}};
    for (std::int64_t d : decoder_counts) {
      for (std::int64_t a : admitted_counts) {
        if (d + a > o.slots) continue;
        for (const auto& [longest, spread] : lengths) probes.push_back({Probe::kIteration, d, a, 0, longest, spread});
      }
    }
    const std::int64_t short_response = std::max<std::int32_t>(1, o.max_response_len / 6);
    const std::int64_t full = o.max_response_len;
    // No train probe beyond a live batch (B x n, when known): no live step has
    // such a shape, and on the 2-core machine the one at 2x the batch (128 x
    // 51) grew the heap past glibc's trim threshold (then 1 GiB), which
    // handed the pages back after it: the live steps that followed at their
    // largest shapes faulted them in again, 1.19-1.49x their prediction
    // (sync's step 5, one_step_off's steps 8 and 11 in run after run).
    const std::int64_t most_samples = o.batch_samples > 0 ? std::min(o.slots, o.batch_samples) : o.slots;
    for (const auto& [samples, longest, spread] :
         std::vector<std::tuple<std::int64_t, std::int64_t, bool>>{{most_samples / 8, short_response, false},
                                                                   {most_samples / 8, full, true},
                                                                   {most_samples / 2, short_response, false},
                                                                   {most_samples / 2, full, true},
                                                                   {most_samples / 2, full, false},
                                                                   {most_samples, full, true}}) {
      probes.push_back({Probe::kTrain, 0, 0, std::max<std::int64_t>(2, samples), longest, spread});
    }
    // Live batches themselves: B x n answers at the task's lengths (fresh draws
    // each time, or the live runs' own batches: use_live_batches), three per
    // pass, so that the fit is held at the shape the twin predicts rather than
    // left to the linear model's reach from the corners (measured on the
    // 2-core machine: 20% high there with one such point).
    const std::int64_t live_batch = std::max<std::int64_t>(2, o.batch_samples > 0 ? o.batch_samples : o.slots);
    for (int i = 0; i < 3; ++i) probes.push_back({Probe::kTrain, 0, 0, live_batch, full, false, true});
    probes.push_back({Probe::kSync});
    // Eight side-by-side probes per pass, spread evenly through it: the
    // slowdown is the noisiest figure. One profile's six pairs read 0.81 to
    // 1.20, and the median of the six that two per pass gave moved between
    // x1.03 and x1.13 from run to run (2026-11-23, 2-core machine), which
    // moves an overlapped twin's train-bound steps as much. With four per
    // pass, the engine's slowdown per probe was bimodal, near x1.0 or
    // x1.15-1.36 (the machine's slow spells land on the two threads side by
    // side), and the 12 probes' total fell below the live rollouts' beside a
    // train step in 7 of 8 validations (x1.09 against x1.13 on average,
    // 2026-11-24): a total of few draws from a right-skewed spread mostly
    // misses its tail.
    // The train step beside the engine is a live batch too: the slowdown depends
    // on the batch's shape (a batch of short answers is hurt more than the
    // long padded one this probe used before).
    const Probe contention{Probe::kContention, wave_requests(), 0, live_batch, full, false, true};
    constexpr std::size_t kContentionPerPass = 8;
    const std::size_t before = probes.size();
    for (std::size_t q = kContentionPerPass - 1; q >= 1; --q) {
      probes.insert(probes.begin() + static_cast<std::ptrdiff_t>(before * q / kContentionPerPass), contention);
    }
    probes.push_back(contention);
    for (std::int64_t a : admitted_counts) probes.push_back({Probe::kAbort, 0, a});
  }

  void sync_device() {
    if (device.is_cuda()) torch::cuda::synchronize();
  }

  GenRequest request(std::int64_t context, std::int32_t max_new) {
    std::vector<std::int32_t> ctx = {CountdownTask::kBos};
    ctx.resize(static_cast<std::size_t>(context), kFiller);
    const auto k = key++;
    return GenRequest{k, ctx, 0, max_new, k};
  }

  void run_iteration(const Probe& p) {
    const auto decoder_new = static_cast<std::int32_t>(cfg.max_seq - 3);
    if (p.decoders != running_decoders || (p.decoders > 0 && decoder_left < 2)) {  // (re)start the decoders
      engine.abort_all();
      running_decoders = p.decoders;
      if (p.decoders > 0) {
        for (std::int64_t k = 0; k < p.decoders; ++k) engine.add(request(3, decoder_new));
        engine.step();
        decoder_left = decoder_new - 1;
      }
    }
    // Probes ask for one token, so they leave at once.
    for (std::int64_t k = 0; k < p.admitted; ++k) {
      const std::int64_t ctx = p.spread && p.admitted > 1 ? 3 + (p.longest - 3) * k / (p.admitted - 1) : p.longest;
      engine.add(request(ctx, 1));
    }
    sync_device();
    engine.step();
    if (p.decoders > 0) {
      engine.step();  // decode only
      decoder_left -= 2;
    }
    sync_device();
    for (auto& it : engine.take_iteration_log()) measured.iterations.push_back(it);
  }

  std::vector<TrainSampleData> train_batch(const Probe& p, rl::TrainPoint& point) {
    std::vector<TrainSampleData> batch;
    // A live batch: the next of the live runs' own, else fresh draws of the task's answer lengths.
    const std::vector<std::int32_t>* live =
        p.task_lengths && !live_batches.empty() ? &live_batches[live_batch_uses++ % live_batches.size()] : nullptr;
    const std::int64_t samples = live != nullptr ? static_cast<std::int64_t>(live->size()) : p.samples;
    point.samples = static_cast<double>(samples);
    for (std::int64_t i = 0; i < samples; ++i) {
      std::int64_t len = p.spread && samples > 1 ? 1 + (p.longest - 1) * i / (samples - 1) : p.longest;
      if (live != nullptr) {
        len = std::clamp<std::int64_t>((*live)[static_cast<std::size_t>(i)], 1, o.max_response_len);
      } else if (p.task_lengths) {
        const auto answer = static_cast<std::int64_t>(task.example(kTrainDrawBase + train_draws++).answer.size());
        len = std::clamp<std::int64_t>(answer, 1, o.max_response_len);
      }
      batch.push_back(filler_sample({CountdownTask::kBos, kFiller, CountdownTask::kSep}, kFiller, static_cast<std::size_t>(len),
                                    static_cast<double>(i % 2), i / 4));
      point.tokens += static_cast<double>(3 + len);
      point.longest_tok = std::max(point.longest_tok, static_cast<double>(3 + len));
    }
    return batch;
  }

  // One rollout wave on the engine alone, the trainer's thread idle, as
  // between two train steps of a live run: `decoders` fresh prompts answered
  // at the task's own lengths (one prefill pass, then decodes as the wave
  // thins out) to the last. A wave, not a time: the same work on any model
  // and device. Its iterations are not kept: they are not the shapes the
  // probes set.
  void rollout_wave(std::int64_t decoders) {
    engine.abort_all();
    running_decoders = 0;
    refill(decoders);
    drain(engine);
  }

  void refill(std::int64_t decoders) {
    if (engine.running() + engine.waiting() > 0) return;
    add_wave(engine, decoders);
  }

  // `decoders` fresh prompts answered at the task's own lengths.
  void add_wave(KvEngine& e, std::int64_t decoders) {
    for (std::int64_t k = 0; k < decoders; ++k) {
      const auto answer = static_cast<std::int32_t>(task.example(static_cast<std::int64_t>(key)).answer.size());
      e.add(request(task.max_prompt_tok(), std::clamp(answer, 1, o.max_response_len)));
    }
  }

  // Steps `e` until it holds nothing; its iterations are not kept.
  void drain(KvEngine& e) {
    while (e.running() + e.waiting() > 0) {
      e.step();
      sync_device();
    }
    (void)e.take_iteration_log();
  }

  void run_train(const Probe& p) {
    rl::TrainPoint point;
    const auto batch = train_batch(p, point);
    // One untimed step of the same batch first. Timed cold, after the probes
    // before it, 3 of the 9 train probes of every pass took 1.4-1.6x the
    // fit, and the fit to that mix predicted a live run's train steps 9-12%
    // too slow (they follow one another at like shapes, warm). Timed after a
    // warm-up, the probes came within 0.94-1.04x of the fit (but the largest,
    // at 2x: a linear model's reach ends there) and the colocated live train
    // steps, summed per run, within 0.95-1.08x of its prediction (8 runs of
    // `april validate`, 2026-11-23).
    // Then a rollout wave on the engine, and the timed step: every live train
    // step comes after the engine's work (a rollout, or the engine beside
    // it), and a step timed straight after another reads fast. In 24 of 28
    // saved 24-step validations sync's live train steps ran above the live
    // batch probes timed so, by a median of 3% (-4% to +8%); a live-batch
    // probe after 3 s of engine work (waves of half the slots) took
    // 1.01-1.04x the same batch's next step, one straight after another
    // batch's step 0.95-1.03x (2026-11-24, 2-core machine, wide tail).
    // Both steps on the trainer's thread, as a live run trains (LiveBackend),
    // timed there from the step's first line to its last; this thread waits
    // as the live loop does, in slices.
    const auto timed_step = [&] {
      const auto t0 = std::chrono::steady_clock::now();
      trainer.step(batch, 0);
      sync_device();
      return since(t0);
    };
    for (int i = 0; i < 2; ++i) {
      if (i == 1) rollout_wave(wave_requests());  // then idle while the step computes, as in a colocated run
      auto f = worker.run(timed_step);
      wait_in_slices(f);
      point.time_s = f.get();
    }
    measured.train.push_back(point);
  }

  // The engine under a rollout's load beside a train step on the trainer's
  // thread, as an overlapped live run has them: waves of `decoders` fresh
  // prompts answered at the task's own lengths (one prefill pass, then decodes
  // as the batch thins out), the next wave when one has drained; every
  // iteration that ran while the step computed, and the step, after the same
  // step alone. And the step's handoff either way (Profile's latencies).
  void run_contention(const Probe& p) {
    using Clock = std::chrono::steady_clock;
    engine.abort_all();
    running_decoders = 0;
    (void)engine.take_iteration_log();
    rl::TrainPoint point;
    const auto batch = train_batch(p, point);
    // The step on the trainer's thread: when its first and last lines ran.
    const auto step_on_worker = [&] {
      const auto start = Clock::now();
      trainer.step(batch, 0);
      if (device.is_cuda()) torch::cuda::synchronize();
      return std::pair{start, Clock::now()};
    };
    const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    // The same step alone first, with this thread waiting for it as a live
    // run's loop waits for a train step that outlasts its rollout: the
    // pair's ratio is the slowdown, with little time for the machine to
    // drift; the wait's end after the step's is the end latency. One
    // untimed step before both: the first step of a new batch shape is slow
    // (fresh allocations), and that cost landed on the step alone, which
    // made the measured slowdown read below 1 (0.70 and 0.77 in the first
    // pairs). The step alone is timed after the engine's work, as the train
    // probes are (run_train): the pair's ratio is then what running beside
    // the engine adds to the step the fit predicts, no more. This thread
    // waits as the live loop does, in slices.
    const auto alone_step = [&] {
      auto f = worker.run(step_on_worker);
      wait_in_slices(f);
      return f.get();
    };
    (void)alone_step();
    rollout_wave(p.decoders);
    const auto [alone_start, alone_end] = alone_step();
    measured.train_end_latency_s.push_back(seconds(Clock::now() - alone_end));
    rl::TrainPoint alone = point;
    alone.time_s = seconds(alone_end - alone_start);
    measured.train_alone_paired.push_back(alone);
    // The engine alone for a wave, the trainer's thread idle: a live run's
    // trainer waits seconds between steps (in slices, WorkerThread) while the
    // engine computes, and starting the step then is what the start latency
    // is.
    rollout_wave(p.decoders);
    if (other) other_arm_turn(p.decoders, batch);
    const auto handed = Clock::now();
    auto beside = worker.run(step_on_worker);
    while (beside.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      refill(p.decoders);
      engine.step();
      sync_device();
      for (const auto& it : engine.take_iteration_log()) measured.iterations_beside_train.push_back(it);
    }
    const auto [beside_start, beside_end] = beside.get();
    measured.train_start_latency_s.push_back(seconds(beside_start - handed));
    point.time_s = seconds(beside_end - beside_start);
    measured.train_beside_engines.push_back(point);
    engine.abort_all();
  }

  // Another policy's turn between two steps of this arm (validate's round),
  // then the weight copy an overlapped step starts with: a rollout wave of
  // `decoders` fresh prompts on the other engine, a train step of the same
  // shape on the other trainer's thread, this thread waiting for it in slices.
  void other_arm_turn(std::int64_t decoders, const std::vector<TrainSampleData>& batch) {
    add_wave(other->engine, decoders);
    drain(other->engine);
    auto f = other->worker.run([this, &batch] {
      other->trainer.step(batch, 0);
      sync_device();
    });
    wait_in_slices(f);
    f.get();
    copy_weights(trainer.policy(), engine.model());
    sync_device();
  }

  void run_abort(const Probe& p) {
    engine.abort_all();  // the iteration probes' decoders; the next iteration probe restarts them
    running_decoders = 0;
    for (std::int64_t k = 0; k < p.admitted; ++k) engine.add(request(3, 8));
    engine.step();  // all running, with their KV
    sync_device();
    const auto t0 = std::chrono::steady_clock::now();
    engine.abort_all();
    sync_device();
    measured.aborts.push_back({static_cast<double>(p.admitted), since(t0)});
  }

  void run_sync() {
    // Weight sync: the engine's copy of the trainer's weights.
    const auto t0 = std::chrono::steady_clock::now();
    copy_weights(trainer.policy(), engine.model());
    sync_device();
    measured.sync_s.push_back(since(t0));
  }
};

LiveProfiler::LiveProfiler(const ProfileOptions& o) {
  configure_runtime(o.threads);
  torch::manual_seed(o.seed);
  const auto device = parse_device(o.device);
  const CountdownTask task(o.task, o.seed);
  impl_ = std::make_unique<Impl>(o, device, model_config(o.model_size, task.vocab(), task.max_prompt_tok() + o.max_response_len));
}

LiveProfiler::~LiveProfiler() = default;

std::int64_t LiveProfiler::probes_per_pass() const { return static_cast<std::int64_t>(impl_->probes.size()); }

void LiveProfiler::use_live_batches(std::vector<std::vector<std::int32_t>> response_tok) {
  std::erase_if(response_tok, [](const auto& b) { return b.empty(); });
  impl_->live_batches = std::move(response_tok);
}

void LiveProfiler::run(std::int64_t count, const std::function<void(std::int64_t done)>& after_each) {
  for (std::int64_t i = 0; i < count; ++i) {
    const Probe p = impl_->probes[impl_->next];
    impl_->next = (impl_->next + 1) % impl_->probes.size();
    switch (p.kind) {
      case Probe::kIteration:
        impl_->run_iteration(p);
        break;
      case Probe::kTrain:
        impl_->run_train(p);
        break;
      case Probe::kSync:
        impl_->run_sync();
        break;
      case Probe::kAbort:
        impl_->run_abort(p);
        break;
      case Probe::kContention:
        impl_->run_contention(p);
        break;
    }
    if (after_each) after_each(i + 1);
  }
  auto& m = impl_->measured;
  m.slices.push_back({static_cast<std::int64_t>(m.iterations.size()), static_cast<std::int64_t>(m.train.size())});
}

rl::Profile LiveProfiler::profile() {
  impl_->engine.abort_all();
  impl_->running_decoders = 0;
  return impl_->measured;
}

rl::Profile profile_live(const ProfileOptions& o, const std::function<void(std::int64_t done, std::int64_t total)>& progress) {
  LiveProfiler profiler(o);
  const std::int64_t total = profiler.probes_per_pass() * std::max<std::int64_t>(1, o.repeats);
  profiler.run(total, [&](std::int64_t done) {
    if (progress) progress(done, total);
  });
  return profiler.profile();
}

}  // namespace april::live
