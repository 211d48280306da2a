// `april live`: the RL loop on wall time with the libtorch backend, the same
// policies as the simulator, GRPO on the built-in countdown task or on math
// prompts for a Hugging Face checkpoint.
#include <fmt/format.h>

#include <chrono>

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#ifdef APRIL_WITH_SERVE
#include "adapters/live/http_backend.hpp"
#endif
#include "adapters/live/hf_trainer.hpp"
#include "adapters/live/live_backend.hpp"
#include "adapters/live/live_config.hpp"
#include "adapters/live/live_memory.hpp"
#include "adapters/live/model_config.hpp"
#include "base/atomic_file.hpp"
#include "base/chrome_trace.hpp"
#include "base/json_file.hpp"
#include "base/machine_memory.hpp"
#include "base/run_keys.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "cli/engine_urls.hpp"
#include "cli/live_task_options.hpp"
#include "cli/output_paths.hpp"
#include "cli/program_exit.hpp"
#include "rl/loop_knobs.hpp"
#include "rl/metric_columns.hpp"
#include "rl/rl_loop.hpp"
#include "rl/run_timeline.hpp"
#include "scenario/scenario.hpp"
#include "sim/engine_knobs.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {

// What a checkpoint must share with the run that resumes it: the model (its
// size and the task's shape fix the weights' shapes), the policy whose state
// the loop holds, and the batch the buffer was filled for.
// A run on a Hugging Face checkpoint records its model and task too.
nlohmann::json checkpoint_run(const std::string& policy, const base::Config& c, const LiveTaskOptions& task_options,
                              const live::LiveTask& task) {
  nlohmann::json j = {{"format", 1},
                      {"policy", policy},
                      {"live.model", c.get(live::keys::kLiveModel)},
                      {"rollout_batch_size", c.get(base::keys::kRolloutBatchSize)},
                      {"n_samples_per_prompt", c.get(base::keys::kSamplesPerPrompt)},
                      {"max_response_len", c.get(base::keys::kMaxResponseLen)}};
  if (!task_options.checkpoint.empty()) {
    j["model_checkpoint"] = task_options.checkpoint;
    j["task"] = task.describe();
  }
  return j;
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

// The scenario's model (the one `simulate` would run) is not what april live
// trains: said, so that nobody reads the live figures as that model's.
void print_model_replaced(const base::Config& c, const std::string& live_model, const std::string& device) {
  const auto scenario_model = c.get(sim::keys::kModel);
  if (scenario_model == live_model) return;
  fmt::print(
      "note: the scenario's model, {}, is simulated only: april live trains {} on {} instead, with the scenario's batch, "
      "lengths and policy keys (its cluster, engine and trainer keys are the simulator's)\n",
      scenario_model, live_model, device);
}

// The RL steps, one line each as they end: the time since the first step
// and an estimate of the time left (the steps so far, extrapolated), the
// progress of a run that may take hours, in a terminal or a log alike.
std::vector<rl::StepMetrics> run_steps(rl::RlLoop& loop, std::int64_t n_steps) {
  std::vector<rl::StepMetrics> steps;
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
  return steps;
}

// summary.json (the scenario, the model and task, `top` merged in, and the
// policy's summary with `policy_extra` merged in) and <policy>/steps.csv,
// put in place whole.
void write_outputs(OutputFolder& out, const std::string& out_dir, const base::Config& c, const std::string& policy_name,
                   const LiveTaskChoice& choice, const std::vector<rl::StepMetrics>& steps, const nlohmann::json& top,
                   const nlohmann::json& policy_extra) {
  const std::filesystem::path dir = out.path();
  std::filesystem::create_directories(dir / policy_name);
  nlohmann::json j = top;
  j["scenario"] = c.resolved();
  j["model"] = choice.model_name;
  j["task"] = choice.task->describe();
  j["policies"][policy_name] = rl::summary_json(rl::summarize(steps));
  j["policies"][policy_name].update(policy_extra);
  base::write_file_atomically((dir / "summary.json").string(), j.dump(2) + "\n");
  base::write_file_atomically((dir / policy_name / "steps.csv").string(), rl::steps_csv(steps));
  out.commit();
  fmt::print("wrote {0}/summary.json and {0}/{1}/steps.csv\n", out_dir, policy_name);
}

// A checkpoint's loop state and the next prompt index, once the run record
// has been checked (cheap, and it names what differs) and the weights loaded.
struct Resumed {
  nlohmann::json loop_state;
  std::int64_t first_index = 0;
};

// keep_config_errors: the servers' load names the file or the server in our
// words already; libtorch's messages run to a stack trace, whose first line
// says what failed.
template <typename Backend>
Resumed load_checkpoint(const std::string& resume, const nlohmann::json& run_record, Backend& backend, bool keep_config_errors) {
  if (base::recover_directory(resume)) {
    fmt::print("{}: restored the previous checkpoint, which a write interrupted by a kill had moved aside\n", resume);
  }
  const auto state_path = (std::filesystem::path(resume) / "loop.json").string();
  const auto state = base::read_json_file(state_path, "checkpoint");
  check_checkpoint_run(state, run_record);
  try {
    backend.load(resume);
  } catch (const std::exception& e) {
    if (keep_config_errors && dynamic_cast<const base::ConfigError*>(&e) != nullptr) throw;
    const std::string what = e.what();
    throw std::runtime_error(fmt::format("{}: cannot load the checkpoint ({})", resume, what.substr(0, what.find('\n'))));
  }
  if (!state.doc.contains("loop") || !state.doc["loop"].is_object()) {
    throw base::ConfigError(fmt::format("{}: field 'loop' is missing", state_path));
  }
  Resumed r;
  r.loop_state = state.doc["loop"];
  r.first_index = base::json_int(state, "next_prompt_index", 0, std::int64_t{1} << 62);
  return r;
}

void load_loop_state(rl::RlLoop& loop, const Resumed& resumed, const std::string& resume) {
  if (resumed.loop_state.is_null()) return;
  loop.load_state(base::JsonValue(resumed.loop_state, (std::filesystem::path(resume) / "loop.json").string(), "/loop"));
  fmt::print("resumed from {} at step {}\n", resume, loop.step());
}

// Assembled beside the checkpoint, then swapped in whole: a kill mid-write
// leaves the previous one usable. An overlapped run's samples in flight come
// back with their tokens (`suspend`; resumed, they re-prefill); a train step
// just started is saved as its batch.
template <typename Backend>
void save_checkpoint(const std::string& save_dir, const Backend& backend, const nlohmann::json& run_record, rl::RlLoop& loop,
                     const live::TaskWorkload& workload, bool suspend) {
  OutputFolder saved(save_dir, "--save");
  if (suspend) loop.suspend();
  backend.save(saved.path());
  nlohmann::json j;
  j["run"] = run_record;
  j["loop"] = loop.save_state();
  j["next_prompt_index"] = workload.next_index();
  base::write_file_atomically((std::filesystem::path(saved.path()) / "loop.json").string(), j.dump() + "\n");
  saved.commit();
  fmt::print("checkpoint written to {}\n", save_dir);
}

// The loop's tracks and the engines', from their occupancy at every change;
// from the first step's start (a warm start before it is not part of the run).
void write_timeline(const std::string& path, const std::string& policy_name, std::int64_t engines,
                    const std::vector<rl::StepMetrics>& steps, const std::vector<rl::EngineRunningChange>& changes,
                    const std::vector<rl::EngineWindowSpan>* windows, rl::TimelineDetail detail) {
  base::ChromeTrace chrome;
  rl::RunTimeline run{"live " + policy_name, engines, &steps, &changes, steps.empty() ? 0.0 : steps.front().start_time_s};
  if (windows != nullptr) run.engine_windows = windows;
  rl::add_run_timeline(chrome, run, 1, detail);
  write_output_file(path, chrome.text());
  fmt::print("wrote {} ({} trace events; open it in ui.perfetto.dev)\n", path, chrome.events());
}

#ifdef APRIL_WITH_SERVE

// --engines: inference servers over HTTP (live::HttpBackend), any policy:
// rollout only (the servers' weights stay; each step's batch is scored by
// the task) or, with --weights-dir, training beside them.
struct HttpRun {
  std::string engines;  // URL,...
  std::string api = "sglang";
  std::int64_t slots = 0;  // --engine-slots: 0, what each server says
  double timeout_s = 600;
  bool failover = false;
  std::string weights_dir;       // "": rollout only
  std::string export_dir;        // with weights_dir: the trained policy written here at the end
  std::string save_dir, resume;  // --save, --resume (colocated policies)
  nlohmann::json run_record;     // what a checkpoint must share with the run that resumes it
  std::string timeline_path;
  rl::TimelineDetail timeline_detail = rl::TimelineDetail::kSteps;
};

// Training: the trainer beside the servers, its weights loaded by them
// each step from a folder of april's (new, empty or april's before).
std::unique_ptr<live::HfTrainer> make_http_trainer(const std::string& weights_dir, const live::LiveOptions& lo,
                                                   const LiveTaskChoice& choice) {
  if (weights_dir.empty()) return nullptr;
  check_output_folder(weights_dir, "--weights-dir");
  // Said in the option's words before any work: a folder that cannot be
  // made or written (read-only, a file in the way) would otherwise end the
  // run in a raw std::filesystem message.
  try {
    std::filesystem::create_directories(weights_dir);
    base::write_file_atomically((std::filesystem::path(weights_dir) / kOutputMarker).string(),
                                "written by april: the weights april live --engines trained\n");
  } catch (const std::filesystem::filesystem_error& e) {
    throw std::invalid_argument(fmt::format("--weights-dir {}: cannot write there ({})", weights_dir, e.code().message()));
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(fmt::format("--weights-dir {}: cannot write there ({})", weights_dir, e.what()));
  }
  return std::make_unique<live::HfTrainer>(lo, choice.model.max_seq);
}

live::HttpBackendOptions http_options(const HttpRun& run, const base::Config& c, live::HfTrainer* trainer) {
  auto ho = live::http_backend_options(c);
  ho.urls = split_urls(run.engines);
  if (engine_api_is_vllm(run.api)) ho.api = live::ServerApi::kVllm;
  if (run.slots < 0 || run.slots > 1000000)
    throw std::invalid_argument(fmt::format("--engine-slots {}: 0 (what the server says) or more", run.slots));
  ho.slots = run.slots;
  if (!(run.timeout_s > 0 && run.timeout_s <= 1e6))
    throw std::invalid_argument(fmt::format("--engine-timeout {}: seconds above 0", run.timeout_s));
  ho.request_timeout_s = run.timeout_s;
  ho.trainer = trainer;
  ho.weights_dir = run.weights_dir;
  ho.failover = run.failover;
  ho.record_changes = !run.timeline_path.empty();
  ho.on_lost = [](const std::string& url, const std::string& why, std::int64_t moved, std::int64_t left) {
    print_error(fmt::format("april live: warning: {} dropped: {}; its {} request(s) go to the {} server(s) left", url, why, moved, left));
  };
  return ho;
}

// The weights every server loaded last (--weights-dir's last v<version>),
// copied: an overlapped policy's next train step may still be updating
// the trainer's own copy on its thread.
void export_loaded_weights(const std::string& export_dir, const live::HttpBackend& backend) {
  const auto loaded = backend.loaded_weights_dir();
  if (loaded.empty()) throw std::runtime_error("--export: no weights were synced to the servers in this run (no step ended)");
  OutputFolder exported(export_dir, "--export");
  for (const auto& entry : std::filesystem::directory_iterator(loaded)) {
    std::filesystem::copy(entry.path(), std::filesystem::path(exported.path()) / entry.path().filename(),
                          std::filesystem::copy_options::recursive);
  }
  exported.commit();
  fmt::print("trained policy written to {} as a Hugging Face checkpoint\n", export_dir);
}

int live_over_http(const HttpRun& run, const std::string& policy_name, policies::Policy& policy, const base::Config& c,
                   const live::LiveOptions& lo, const LiveTaskChoice& choice, std::optional<OutputFolder>& out,
                   const std::string& out_dir) {
  const auto trainer = make_http_trainer(run.weights_dir, lo, choice);
  const auto ho = http_options(run, c, trainer.get());
  live::HttpBackend backend(ho, *choice.task);
  fmt::print("april live: {} on {} server(s) over {} ({}), policy {}, B = {} x n = {}, {}\n",
             trainer ? fmt::format("training {} ({} parameters), weights through {}", choice.model_name, choice.model.parameters(),
                                   run.weights_dir)
                     : std::string("rollout only"),
             ho.urls.size(), live::server_dialect(ho.api).name(), run.engines, policy_name, c.get(base::keys::kRolloutBatchSize),
             c.get(base::keys::kSamplesPerPrompt), choice.task->describe());
  print_model_replaced(c, choice.model_name, fmt::format("{} server(s)", ho.urls.size()));
  std::fflush(stdout);
  Resumed resumed;
  if (!run.resume.empty()) resumed = load_checkpoint(run.resume, run.run_record, backend, true);
  const auto workload = choice.task->workload(c.get(base::keys::kSamplesPerPrompt), resumed.first_index);
  // GPU-hours are charged one GPU per server: a server's own count is not asked for.
  const auto loop = rl::make_loop(c, backend, policy, *workload, static_cast<std::int64_t>(ho.urls.size()));
  load_loop_state(*loop, resumed, run.resume);
  const auto steps = run_steps(*loop, c.get(base::keys::kSteps));
  const auto d = rl::derive(rl::summarize(steps).totals);
  fmt::print("\nrollout throughput {:.0f} tok/s over {} steps; {} requests answered, {} of them aborted; {} of {} server(s) lost\n",
             d.rollout_throughput_tok_s, steps.size(), backend.requests_answered(), backend.requests_aborted(), backend.servers_lost(),
             ho.urls.size());
  if (!run.timeline_path.empty()) {
    // A track per server from its outstanding requests.
    const auto changes = backend.take_engine_changes();
    write_timeline(run.timeline_path, policy_name, static_cast<std::int64_t>(ho.urls.size()), steps, changes, nullptr, run.timeline_detail);
  }
  if (out) {
    nlohmann::json p;
    p["requests_answered"] = backend.requests_answered();
    p["requests_aborted"] = backend.requests_aborted();
    p["servers_lost"] = backend.servers_lost();
    write_outputs(*out, out_dir, c, policy_name, choice, steps, {{"engines", ho.urls}, {"engine_api", run.api}}, p);
  }
  // Between colocated steps nothing is in flight.
  if (!run.save_dir.empty()) save_checkpoint(run.save_dir, backend, run.run_record, *loop, *workload, false);
  if (!run.export_dir.empty()) export_loaded_weights(run.export_dir, backend);
  return 0;
}
#endif

// What the command line says, bound to the options that fill it.
struct LiveArgs {
  std::string scenario = "live-cpu", policy_name = "april", device = "cpu", out_dir, save_dir, export_dir, resume, timeline_path, engines,
              weights_dir, timeline_detail = "steps";
  std::vector<std::string> sets;
  double engine_timeout_s = 600;
  bool engine_failover = false;
  std::string engine_api = "sglang";
  std::int64_t engine_slots = 0;
  LiveTaskOptions task_options;
};

po::options_description live_options(LiveArgs& a) {
  po::options_description opts(
      "usage: april live [--scenario S] [--policy NAME] [--device cpu|cuda] [--steps N] [--out DIR]\n"
      "                  [--save DIR] [--resume DIR] [--timeline FILE] [--timeline-detail steps|changes|windows]\n"
      "                  [--checkpoint DIR --dataset FILE [--dataset-layout L] [--chat FAMILY] [--reward math|dapo]\n"
      "                   [--export DIR] [--engines URL,... [--engine-api sglang|vllm] [--engine-slots N] [--weights-dir DIR]\n"
      "                                                     [--engine-timeout S] [--engine-failover]]]\n"
      "                  [--set key=value]...\n"
      "Trains a transformer with GRPO on the countdown task (count down from N to 1, then stop: long-tail\n"
      "answer lengths, exact-match reward), or, with --checkpoint and --dataset, a Hugging Face model\n"
      "(Qwen3, Qwen2/Qwen2.5, Llama 3) on math prompts wrapped in its chat template, rewarded by the math\n"
      "verifier (the last \\boxed{} or final number against the gold answer),\n"
      "with the rollout policy driving a real continuous-batching engine: april's own in process, or with --engines\n"
      "inference servers over SGLang's HTTP API (SGLang or april serve; rollout only, or training with --weights-dir,\n"
      "the servers loading each step's weights through /update_weights_from_disk) or vLLM's /v1/completions (vLLM or\n"
      "april serve, streamed, aborted by closing the stream; rollout only). A policy that overlaps rollout and\n"
      "training (one_step_off, async) runs the trainer on its own thread and its own copy of the weights beside\n"
      "the engine (or the servers), each with live.threads torch threads. April's own model warm-starts with live.sft_steps\n"
      "supervised steps (a checkpoint needs none), then prints one line per RL step; --out writes summary.json and\n"
      "<policy>/steps.csv as `april simulate` does, plus reward_mean and accuracy. On the CPU it first estimates its\n"
      "memory (weights, KV cache, activations) and refuses a run the machine cannot hold.\n\noptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&a.scenario), (scenario_help() + "; default live-cpu").c_str())(
      "policy", po::value(&a.policy_name), "rollout policy (default april)")("device", po::value(&a.device), "cpu or cuda")(
      "steps", integer_option(), "RL steps")("seed", integer_option(), "seed")(
      "set", po::value(&a.sets), "override a scenario key (repeatable)")("out", po::value(&a.out_dir), "write results here")(
      "save", po::value(&a.save_dir), "save model, optimizer, buffer and loop state here at the end (for --resume)")(
      "engines", po::value(&a.engines),
      "with --checkpoint and --dataset: roll out on these inference servers over SGLang's HTTP API "
      "or, with --engine-api vllm, vLLM's (URL,...: SGLang, vLLM or april serve holding the same model), rollout only: their "
      "weights stay and each batch is scored")(
      "engine-api", po::value(&a.engine_api),
      "with --engines: sglang (default: /generate and /abort_request) or vllm (a streamed "
      "/v1/completions per sample, aborted by closing it, as vLLM has no abort outside its dev mode; rollout only)")(
      "engine-slots", integer_option(&a.engine_slots, 0),
      "with --engines: requests sent to a server at once, the rest held in april "
      "in the policy's order (default: the server's max_running_requests; a vLLM server says none: give its --max-num-seqs)")(
      "weights-dir", po::value(&a.weights_dir),
      "with --engines: train, and after each step write the weights to DIR/v<version> and load "
      "them into every server through /update_weights_from_disk (DIR must be readable by the servers); without it, rollout only")(
      "engine-timeout", po::value(&a.engine_timeout_s)->default_value(600),
      "with --engines: seconds a /generate may take (a stream: "
      "may stay silent) before the run fails naming the server (default 600)")(
      "engine-failover", po::bool_switch(&a.engine_failover),
      "with --engines: a server that stops answering (no connection, a "
      "connection cut, no reply within --engine-timeout) is dropped with a warning naming it, and its requests go again to the "
      "servers left, from the tokens their samples held; without it the step fails naming the server")(
      "export", po::value(&a.export_dir),
      "with --checkpoint (with --engines, and --weights-dir): write the trained policy here at the end as a Hugging Face checkpoint "
      "(safetensors in the source's dtype, its config and tokenizer files copied) that an inference server loads")(
      "resume", po::value(&a.resume), "continue from a checkpoint (skips the warm start)")(
      "timeline", po::value(&a.timeline_path),
      "write the run as a Chrome trace-event JSON FILE (ui.perfetto.dev): rollout, abort, "
      "train and sync spans on the wall clock, each step's metrics, and the engine's busy spans")(
      "timeline-detail", po::value(&a.timeline_detail),
      "steps (default), changes (also the engine's running and queued requests and "
      "KV tokens at every change) or windows (changes, and each engine iteration as a prefill or decode span with its batch and "
      "KV tokens, in place of the busy spans)");
  a.task_options.add_to(opts);
  return opts;
}

// The output paths, checked before the run (out made ready), and --timeline-detail.
rl::TimelineDetail check_live_outputs(const LiveArgs& a, const po::variables_map& vm, std::optional<OutputFolder>& out) {
  // `--engines ''` (an unset shell variable) must not quietly run the in-process engine.
  if (vm.count("engines") != 0 && a.engines.empty())
    throw std::invalid_argument("--engines: expected URL,... of the inference servers, got ''");
  check_outputs_apart(
      {{"--out", a.out_dir, true}, {"--save", a.save_dir, true}, {"--export", a.export_dir, true}, {"--timeline", a.timeline_path, false}});
  if (!a.out_dir.empty()) out.emplace(a.out_dir, "--out");
  if (!a.save_dir.empty()) check_output_folder(a.save_dir, "--save");  // before the run, not after it
  if (!a.export_dir.empty()) {
    if (a.task_options.checkpoint.empty()) throw std::invalid_argument("--export writes a Hugging Face checkpoint: it needs --checkpoint");
    check_output_folder(a.export_dir, "--export");
  }
  if (a.timeline_path == "-") throw std::invalid_argument("--timeline -: a timeline is written to a file, not to standard output");
  const auto detail = rl::parse_timeline_detail(a.timeline_detail);
  if (!a.timeline_path.empty()) check_output_file(a.timeline_path, "--timeline");
  return detail;
}

// The --engine-* options go with --engines, and --engines with what it can run.
void check_engine_args(const LiveArgs& a, const po::variables_map& vm, const policies::Policy& policy, rl::TimelineDetail detail) {
  if (a.engines.empty() && (vm.count("engine-api") || (vm.count("engine-slots") && !vm["engine-slots"].defaulted()))) {
    throw std::invalid_argument("--engine-api and --engine-slots are for the servers of --engines: give --engines");
  }
  if (a.engines.empty() && !a.weights_dir.empty())
    throw std::invalid_argument("--weights-dir is where --engines training writes its weights: give --engines");
  if (a.engines.empty()) return;
  if (a.task_options.checkpoint.empty())
    throw std::invalid_argument("--engines needs --checkpoint and --dataset: the tokenizer and the prompts");
  for (const auto& [given, name] : {std::pair{&a.save_dir, "--save"}, {&a.resume, "--resume"}}) {
    if (!given->empty() && policy.overlaps()) {
      throw std::invalid_argument(
          fmt::format("{} with --engines: colocated policies only (policy {} trains and syncs beside "
                      "requests in flight)",
                      name, a.policy_name));
    }
  }
  if (!a.export_dir.empty() && a.weights_dir.empty()) {
    throw std::invalid_argument(
        "--export with --engines writes the policy that --weights-dir training trains: give --weights-dir "
        "(rollout only trains nothing)");
  }
  if (detail == rl::TimelineDetail::kWindows) {
    throw std::invalid_argument(
        "--timeline-detail windows: a server does not report its iterations over HTTP; use steps or changes "
        "with --engines");
  }
}

// On the CPU, before anything is allocated: the run's memory, refused past
// the machine's. A trained policy stops after the task's longest answer; an
// untrained one (no warm start, no checkpoint) may run to max_response_len.
// Each train step is checked again on its real batch. Returns the note the
// first line carries.
std::string check_cpu_memory(live::LiveOptions& lo, const LiveArgs& a, const base::Config& c, const LiveTaskChoice& choice) {
  if (a.device != "cpu") return "";
  lo.memory_limit_bytes = base::machine_memory_bytes();
  const bool trained = lo.sft_steps > 0 || !a.resume.empty() || choice.pretrained;
  const auto in = live::run_memory_inputs(lo, choice.model, c.get(base::keys::kRolloutBatchSize) * c.get(base::keys::kSamplesPerPrompt),
                                          choice.task->max_prompt_tok(), choice.max_answer_tok, trained);
  const auto estimate = live::estimate_live_memory(in);
  live::check_live_memory(estimate, lo.memory_limit_bytes, "april live");
  return fmt::format(", memory estimate {:.1f} GiB of {:.1f}", estimate.total() / 1073741824.0,
                     static_cast<double>(lo.memory_limit_bytes) / 1073741824.0);
}

void warm_start(live::LiveBackend& backend, const live::LiveOptions& lo) {
  fmt::print("warm start: {} supervised steps (live.sft_steps)...\n", lo.sft_steps);
  std::fflush(stdout);
  const auto t0 = backend.now_s();
  // After its first step, how long the rest will take: the first step's
  // time times the steps left (a step's work is the same each time).
  const double loss = backend.warm_start([&](std::int64_t step, double) {
    if (step != 0 || lo.sft_steps < 2) return;
    const double first_s = backend.now_s() - t0;
    fmt::print("warm start: step 1 of {} in {:.1f} s; about {:.0f} s to go\n", lo.sft_steps, first_s,
               first_s * static_cast<double>(lo.sft_steps - 1));
    std::fflush(stdout);
  });
  fmt::print("warm start: {} supervised steps in {:.1f} s, final loss {:.3f}\n", lo.sft_steps, backend.now_s() - t0, loss);
}

// The engine's totals, and the greedy accuracy before and after RL.
void print_engine_summary(const std::vector<rl::StepMetrics>& steps, const live::LiveStats& st, std::int64_t eval_n, double acc_before,
                          double acc_after) {
  const auto d = rl::derive(rl::summarize(steps).totals);
  fmt::print(
      "\nrollout throughput {:.0f} tok/s over {} steps; engine decoded {} tokens in {} iterations, busy {:.1f} s ({:.0f} tok/s busy)\n",
      d.rollout_throughput_tok_s, steps.size(), st.decoded_tok, st.iterations, st.engine_busy_s,
      st.engine_busy_s > 0 ? static_cast<double>(st.decoded_tok) / st.engine_busy_s : 0.0);
  if (eval_n > 0) fmt::print("greedy accuracy on {} held-out prompts: {:.3f} before RL, {:.3f} after\n", eval_n, acc_before, acc_after);
}

// The run on april's own engine in this process.
int live_in_process(const LiveArgs& a, policies::Policy& policy, const base::Config& c, live::LiveOptions& lo, const LiveTaskChoice& choice,
                    std::optional<OutputFolder>& out, rl::TimelineDetail detail) {
  const live::LiveTask& task = *choice.task;
  const auto memory_note = check_cpu_memory(lo, a, c, choice);
  live::LiveBackend backend(lo, task);
  fmt::print("april live: {} ({} parameters) on {}, policy {}, B = {} x n = {}, {}{}\n", choice.model_name, choice.model.parameters(),
             backend.stats().device, a.policy_name, c.get(base::keys::kRolloutBatchSize), c.get(base::keys::kSamplesPerPrompt),
             task.describe(), memory_note);
  print_model_replaced(c, choice.model_name, backend.stats().device);
  std::fflush(stdout);

  const auto run_record = checkpoint_run(a.policy_name, c, a.task_options, task);
  Resumed resumed;
  if (!a.resume.empty())
    resumed = load_checkpoint(a.resume, run_record, backend, false);
  else if (lo.sft_steps > 0)
    warm_start(backend, lo);
  const auto eval_n = c.get(live::keys::kLiveEvalPrompts);
  const double acc_before = eval_n > 0 ? backend.evaluate(eval_n) : 0.0;
  if (eval_n > 0) fmt::print("greedy accuracy on {} held-out prompts before RL: {:.3f}\n", eval_n, acc_before);

  const auto workload = task.workload(c.get(base::keys::kSamplesPerPrompt), resumed.first_index);
  const auto loop = rl::make_loop(c, backend, policy, *workload, 1);  // one device
  load_loop_state(*loop, resumed, a.resume);

  const auto steps = run_steps(*loop, c.get(base::keys::kSteps));
  const double acc_after = eval_n > 0 ? backend.evaluate(eval_n) : 0.0;
  const auto st = backend.stats();
  print_engine_summary(steps, st, eval_n, acc_before, acc_after);
  if (!a.timeline_path.empty()) {
    const auto changes = backend.take_engine_changes();
    const auto windows = backend.take_engine_windows();
    write_timeline(a.timeline_path, a.policy_name, 1, steps, changes, &windows, detail);
  }
  if (out) {
    nlohmann::json j;
    j["device"] = st.device;
    j["model_parameters"] = choice.model.parameters();
    nlohmann::json p;
    p["eval_accuracy_before"] = acc_before;
    p["eval_accuracy_after"] = acc_after;
    p["engine_decoded_tok"] = st.decoded_tok;
    p["engine_busy_s"] = st.engine_busy_s;
    write_outputs(*out, a.out_dir, c, a.policy_name, choice, steps, j, p);
  }
  if (!a.save_dir.empty()) save_checkpoint(a.save_dir, backend, run_record, *loop, *workload, policy.overlaps());
  if (!a.export_dir.empty()) {
    OutputFolder exported(a.export_dir, "--export");
    backend.save_hf(exported.path());
    exported.commit();
    fmt::print("trained policy written to {} as a Hugging Face checkpoint\n", a.export_dir);
  }
  return 0;
}

}  // namespace

int live_command(const std::vector<std::string>& args) {
  LiveArgs a;
  const auto opts = live_options(a);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  std::optional<OutputFolder> out;
  const auto detail = check_live_outputs(a, vm, out);

  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  base::Config c(schema);
  apply_cli_scenario(c, a.scenario, a.sets, opt_int(vm, "steps"), opt_int(vm, "seed"));
  auto policy = registry.get(a.policy_name).make(c);

  live::LiveOptions lo = live::live_options(c, a.device, policy->mask_tokens_staler_than());
  lo.record_engine_changes = !a.timeline_path.empty();
  lo.record_engine_windows = !a.timeline_path.empty() && detail == rl::TimelineDetail::kWindows;
  const auto choice = make_live_task(a.task_options, c, lo.max_response_len);
  lo.hf_checkpoint = a.task_options.checkpoint;
  if (!a.resume.empty() || choice.pretrained) lo.sft_steps = 0;
  check_engine_args(a, vm, *policy, detail);
  if (a.engines.empty()) return live_in_process(a, *policy, c, lo, choice, out, detail);
#ifdef APRIL_WITH_SERVE
  return live_over_http({a.engines, a.engine_api, a.engine_slots, a.engine_timeout_s, a.engine_failover, a.weights_dir, a.export_dir,
                         a.save_dir, a.resume, checkpoint_run(a.policy_name, c, a.task_options, *choice.task), a.timeline_path, detail},
                        a.policy_name, *policy, c, lo, choice, out, a.out_dir);
#else
  throw std::invalid_argument("--engines: this april-live was built without cpp-httplib (Debian's libcpp-httplib-dev)");
#endif
}

}  // namespace april::cli
