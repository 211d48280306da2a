// `april live`: the RL loop on wall time with the libtorch backend, the same
// policies as the simulator, GRPO on the built-in countdown task.
#include <fmt/format.h>

#include <chrono>

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "adapters/live/live_backend.hpp"
#include "base/chrome_trace.hpp"
#include "rl/run_timeline.hpp"
#include "rl/metric_columns.hpp"
#include "base/run_keys.hpp"
#include "adapters/live/live_config.hpp"
#include "adapters/live/live_memory.hpp"
#include "adapters/live/model_config.hpp"
#include "rl/loop_knobs.hpp"
#include "rl/rl_loop.hpp"
#include "scenario/scenario.hpp"
#include "base/atomic_file.hpp"
#include "base/machine_memory.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "base/json_file.hpp"
#include "cli/output_paths.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {

// What a checkpoint must share with the run that resumes it: the model (its
// size and the task's shape fix the weights' shapes), the policy whose state
// the loop holds, and the batch the buffer was filled for.
nlohmann::json checkpoint_run(const std::string& policy, const base::Config& c) {
  return {{"format", 1},
          {"policy", policy},
          {"live.model", c.get(live::keys::kLiveModel)},
          {"rollout_batch_size", c.get(base::keys::kRolloutBatchSize)},
          {"n_samples_per_prompt", c.get(base::keys::kSamplesPerPrompt)},
          {"max_response_len", c.get(base::keys::kMaxResponseLen)}};
}

// Refuses a checkpoint written for another run, naming the field that differs.
void check_checkpoint_run(const base::JsonFile& state, const nlohmann::json& run) {
  const auto it = state.doc.find("run");
  if (it == state.doc.end() || !it->is_object()) {
    throw base::ConfigError(fmt::format("{}: field 'run' is missing: a checkpoint of an older april, or not one of april's", state.path));
  }
  for (const auto& [key, want] : run.items()) {
    const auto got = it->find(key);
    if (got == it->end() || *got != want) {
      throw base::ConfigError(fmt::format("{}: field 'run.{}': the checkpoint has {}, this run {}", state.path, key,
                                          got == it->end() ? std::string("nothing") : got->dump(), want.dump()));
    }
  }
}

}  // namespace

int live_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: april live [--scenario S] [--policy NAME] [--device cpu|cuda] [--steps N] [--out DIR]\n"
      "                  [--checkpoint DIR] [--resume DIR] [--timeline FILE] [--timeline-detail steps|changes]\n"
      "                  [--set key=value]...\n"
      "Trains a transformer with GRPO on the countdown task (count down from N to 1, then stop: long-tail\n"
      "answer lengths, exact-match reward),\n"
      "with the rollout policy driving a real continuous-batching engine. A policy that overlaps rollout and\n"
      "training (one_step_off, async) runs the trainer on its own thread and its own copy of the weights beside\n"
      "the engine, each with live.threads torch threads. Warm-starts with live.sft_steps\n"
      "supervised steps, then prints one line per RL step; --out writes summary.json and\n"
      "<policy>/steps.csv as `april simulate` does, plus reward_mean and accuracy. On the CPU it first estimates its\n"
      "memory (weights, KV cache, activations) and refuses a run the machine cannot hold.\n\noptions");
  std::string scenario = "live-cpu", policy_name = "april", device = "cpu", out_dir, checkpoint, resume, timeline_path,
              timeline_detail = "steps";
  std::vector<std::string> sets;
  opts.add_options()("help,h", "show this help")("scenario", po::value(&scenario), (scenario_help() + "; default live-cpu").c_str())(
      "policy", po::value(&policy_name), "rollout policy (default april)")("device", po::value(&device), "cpu or cuda")(
      "steps", integer_option(), "RL steps")("seed", integer_option(), "seed")(
      "set", po::value(&sets), "override a scenario key (repeatable)")("out", po::value(&out_dir), "write results here")(
      "checkpoint", po::value(&checkpoint), "save model, optimizer, buffer and loop state here at the end")(
      "resume", po::value(&resume), "continue from a checkpoint (skips the warm start)")(
      "timeline", po::value(&timeline_path), "write the run as a Chrome trace-event JSON FILE (ui.perfetto.dev): rollout, abort, "
      "train and sync spans on the wall clock, each step's metrics, and the engine's busy spans")(
      "timeline-detail", po::value(&timeline_detail), "steps (default) or changes (also the engine's running and queued requests and "
      "KV tokens at every change)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  std::optional<OutputFolder> out;
  if (!out_dir.empty()) out.emplace(out_dir, "--out");
  if (!checkpoint.empty()) check_output_folder(checkpoint, "--checkpoint");  // before the run, not after it
  if (timeline_path == "-") throw std::invalid_argument("--timeline -: a timeline is written to a file, not to standard output");
  const auto detail = rl::parse_timeline_detail(timeline_detail);
  if (!timeline_path.empty()) check_output_file(timeline_path, "--timeline");

  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  base::Config c(schema);
  apply_cli_scenario(c, scenario, sets, opt_int(vm, "steps"), opt_int(vm, "seed"));
  auto policy = registry.get(policy_name).make(c);

  const live::CountdownParams tp = live::task_params(c);
  const auto seed = static_cast<std::uint64_t>(c.get(base::keys::kSeed));
  const live::CountdownTask task(tp, seed);
  live::LiveOptions lo = live::live_options(c, device, policy->mask_tokens_staler_than());
  lo.record_engine_changes = !timeline_path.empty();
  if (!resume.empty()) lo.sft_steps = 0;
  const auto mc = live::model_config(lo.model_size, task.vocab(), task.max_prompt_tok() + lo.max_response_len);
  std::string memory_note;
  if (device == "cpu") {
    // Before anything is allocated. A trained policy stops after the task's
    // longest answer; an untrained one (no warm start, no checkpoint) may run
    // to max_response_len. Each train step is checked again on its real batch.
    lo.memory_limit_bytes = base::machine_memory_bytes();
    const bool trained = lo.sft_steps > 0 || !resume.empty();
    const auto in = live::run_memory_inputs(lo, mc, c.get(base::keys::kRolloutBatchSize) * c.get(base::keys::kSamplesPerPrompt),
                                            task.max_prompt_tok(), task.max_answer_tok(), trained);
    const auto estimate = live::estimate_live_memory(in);
    live::check_live_memory(estimate, lo.memory_limit_bytes, "april live");
    memory_note = fmt::format(", memory estimate {:.1f} GiB of {:.1f}", estimate.total() / 1073741824.0,
                              static_cast<double>(lo.memory_limit_bytes) / 1073741824.0);
  }
  live::LiveBackend backend(lo, task);
  fmt::print("april live: {} ({} parameters) on {}, policy {}, B = {} x n = {}, countdown task median N {}{}\n", lo.model_size,
             mc.parameters(), backend.stats().device, policy_name, c.get(base::keys::kRolloutBatchSize), c.get(base::keys::kSamplesPerPrompt),
             tp.median_len, memory_note);
  std::fflush(stdout);

  std::int64_t first_index = 0;
  nlohmann::json loop_state;
  if (!resume.empty()) {
    if (base::recover_directory(resume)) {
      fmt::print("{}: restored the previous checkpoint, which a write interrupted by a kill had moved aside\n", resume);
    }
    // The run record first (cheap, and it names what differs), then the weights.
    const auto state_path = (std::filesystem::path(resume) / "loop.json").string();
    const auto state = base::read_json_file(state_path, "checkpoint");
    check_checkpoint_run(state, checkpoint_run(policy_name, c));
    try {
      backend.load(resume);
    } catch (const std::exception& e) {
      // libtorch's messages run to a stack trace: its first line says what failed.
      const std::string what = e.what();
      throw std::runtime_error(fmt::format("{}: cannot load the checkpoint ({})", resume, what.substr(0, what.find('\n'))));
    }
    if (!state.doc.contains("loop") || !state.doc["loop"].is_object()) {
      throw base::ConfigError(fmt::format("{}: field 'loop' is missing", state_path));
    }
    loop_state = state.doc["loop"];
    first_index = base::json_int(state, "next_prompt_index", 0, std::int64_t{1} << 62);
  } else if (lo.sft_steps > 0) {
    fmt::print("warm start: {} supervised steps (live.sft_steps)...\n", lo.sft_steps);
    std::fflush(stdout);
    const auto t0 = backend.now_s();
    const double loss = backend.warm_start();
    fmt::print("warm start: {} supervised steps in {:.1f} s, final loss {:.3f}\n", lo.sft_steps, backend.now_s() - t0, loss);
  }
  const auto eval_n = c.get(live::keys::kLiveEvalPrompts);
  const double acc_before = eval_n > 0 ? backend.evaluate(eval_n) : 0.0;
  if (eval_n > 0) fmt::print("greedy accuracy on {} held-out prompts before RL: {:.3f}\n", eval_n, acc_before);

  live::CountdownWorkload workload(task, c.get(base::keys::kSamplesPerPrompt), first_index);
  const auto loop_owner = rl::make_loop(c, backend, *policy, workload, 1);  // one device
  rl::RlLoop& loop = *loop_owner;
  if (!loop_state.is_null()) {
    loop.load_state(base::JsonValue(loop_state, (std::filesystem::path(resume) / "loop.json").string(), "/loop"));
    fmt::print("resumed from {} at step {}\n", resume, loop.step());
  }

  std::vector<rl::StepMetrics> steps;
  const auto n_steps = c.get(base::keys::kSteps);
  // Each step's line carries the time since the first step and an estimate
  // of the time left (the steps so far, extrapolated): the progress of a run
  // that may take hours, in a terminal or a log alike.
  fmt::print("{:>4} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>7} {:>9} {:>9}\n", "step", "rollout s", "train s", "tok/s", "reward", "accuracy",
             "off-pol", "buffer", "elapsed s", "left s");
  std::fflush(stdout);
  const auto steps_start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < n_steps; ++i) {
    const auto m = loop.run_step();
    const auto d = rl::derive(m);
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - steps_start).count();
    const double left_s = elapsed_s / static_cast<double>(i + 1) * static_cast<double>(n_steps - i - 1);
    fmt::print("{:>4} {:>9.2f} {:>9.2f} {:>9.0f} {:>8.3f} {:>8.3f} {:>8.1f}% {:>7} {:>9.0f} {:>9.0f}\n", m.step, m.rollout_time_s,
               m.train_time_s, d.rollout_throughput_tok_s, m.reward_mean.value_or(0), m.accuracy.value_or(0),
               100.0 * d.offpolicy_token_fraction, m.buffer_groups, elapsed_s, left_s);
    std::fflush(stdout);
    steps.push_back(m);
  }
  const double acc_after = eval_n > 0 ? backend.evaluate(eval_n) : 0.0;
  const auto summary = rl::summarize(steps);
  const auto d = rl::derive(summary.totals);
  const auto st = backend.stats();
  fmt::print("\nrollout throughput {:.0f} tok/s over {} steps; engine decoded {} tokens in {} iterations, busy {:.1f} s ({:.0f} tok/s busy)\n",
             d.rollout_throughput_tok_s, steps.size(), st.decoded_tok, st.iterations, st.engine_busy_s,
             st.engine_busy_s > 0 ? static_cast<double>(st.decoded_tok) / st.engine_busy_s : 0.0);
  if (eval_n > 0) fmt::print("greedy accuracy on {} held-out prompts: {:.3f} before RL, {:.3f} after\n", eval_n, acc_before, acc_after);

  if (!timeline_path.empty()) {
    // The loop's tracks and the engine's, from its occupancy at every change.
    base::ChromeTrace chrome;
    const auto changes = backend.take_engine_changes();
    // From the first step's start: the warm start before it is not part of the run.
    rl::add_run_timeline(chrome, {"live " + policy_name, 1, &steps, &changes, steps.empty() ? 0.0 : steps.front().start_time_s}, 1,
                         detail);
    write_output_file(timeline_path, chrome.text());
    fmt::print("wrote {} ({} trace events; open it in ui.perfetto.dev)\n", timeline_path, chrome.events());
  }
  if (out) {
    const std::filesystem::path dir = out->path();
    std::filesystem::create_directories(dir / policy_name);
    nlohmann::json j;
    j["scenario"] = c.resolved();
    j["device"] = st.device;
    j["model_parameters"] = mc.parameters();
    j["policies"][policy_name] = rl::summary_json(summary);
    j["policies"][policy_name]["eval_accuracy_before"] = acc_before;
    j["policies"][policy_name]["eval_accuracy_after"] = acc_after;
    j["policies"][policy_name]["engine_decoded_tok"] = st.decoded_tok;
    j["policies"][policy_name]["engine_busy_s"] = st.engine_busy_s;
    base::write_file_atomically((dir / "summary.json").string(), j.dump(2) + "\n");
    base::write_file_atomically((dir / policy_name / "steps.csv").string(), rl::steps_csv(steps));
    out->commit();
    fmt::print("wrote {0}/summary.json and {0}/{1}/steps.csv\n", out_dir, policy_name);
  }
  if (!checkpoint.empty()) {
    // Assembled in a folder beside the checkpoint, then swapped in whole: a
    // kill mid-write leaves the previous checkpoint usable.
    OutputFolder saved(checkpoint, "--checkpoint");
    // An overlapped run's samples in flight come back with their tokens
    // (resumed, they re-prefill); a train step just started is saved as its batch.
    if (policy->overlaps()) loop.suspend();
    backend.save(saved.path());
    nlohmann::json j;
    j["run"] = checkpoint_run(policy_name, c);
    j["loop"] = loop.save_state();
    j["next_prompt_index"] = workload.next_index();
    base::write_file_atomically((std::filesystem::path(saved.path()) / "loop.json").string(), j.dump() + "\n");
    saved.commit();
    fmt::print("checkpoint written to {}\n", checkpoint);
  }
  return 0;
}

}  // namespace april::cli
