// `april profile`: measure the live engine (or an inference server) for `april calibrate`.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "adapters/live/live_config.hpp"
#include "adapters/live/profiler.hpp"
#include "base/atomic_file.hpp"
#include "base/chrome_trace.hpp"
#include "base/run_keys.hpp"
#include "cli/terminal_progress.hpp"
#include "rl/metric_columns.hpp"
#include "rl/run_timeline.hpp"
#include "scenario/model_version.hpp"
#include "scenario/scenario.hpp"
#include "studies/calibration.hpp"
#include "studies/live_validation.hpp"
#include "studies/results_db.hpp"
#ifdef APRIL_WITH_SERVE
#include "adapters/live/http_profiler.hpp"
#include "cli/engine_urls.hpp"
#include "studies/engines_validation.hpp"
#endif
#include "base/hash.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "cli/live_task_options.hpp"
#include "cli/output_paths.hpp"
#include "cli/profile_options.hpp"
#include "traces/jsonl_trace.hpp"

namespace april::cli {
namespace po = boost::program_options;

live::ProfileOptions profile_options(const base::Config& c, const std::string& device, std::int64_t repeats) {
  live::ProfileOptions o;
  o.model_size = c.get(live::keys::kLiveModel);
  o.device = device;
  o.slots = c.get(live::keys::kLiveSlots);
  o.threads = c.get(live::keys::kLiveThreads);
  o.max_response_len = static_cast<std::int32_t>(c.get(base::keys::kMaxResponseLen));
  o.serving = live::serving_options(c);
  o.repeats = repeats;
  o.batch_samples = c.get(base::keys::kRolloutBatchSize) * c.get(base::keys::kSamplesPerPrompt);
  o.seed = static_cast<std::uint64_t>(c.get(base::keys::kSeed));
  o.task = live::task_params(c);
  return o;
}

namespace {

// What `april profile`'s command line says, bound to the options that fill it.
struct ProfileArgs {
  std::string scenario = "live-cpu", device = "cpu", out, model, engine, engine_api = "sglang";
  std::vector<std::string> sets;
  std::int64_t repeats = live::ProfileOptions{}.repeats, decode_tok = 32, max_token_id = 100, engine_slots = 0;
  bool no_weight_load = false;
};

po::options_description profile_cli_options(ProfileArgs& a) {
  po::options_description opts(
      "usage: april profile [--scenario S] [--device cpu|cuda] [--model SIZE] [--repeats R] --out profile.json\n"
      "       april profile --engine URL [--engine-api sglang|vllm] [--engine-slots N] [--repeats R] [--decode-tok N]\n"
      "                     [--max-token-id ID] [--no-weight-load] --out profile.json\n"
      "Measures the live engine's iterations in the shapes a rollout produces (requests decoding while\n"
      "others are admitted, contexts of one length or spread up to the longest, decode-only iterations),\n"
      "train steps over batch sizes and response lengths (each timed after a rollout wave on the engine, as\n"
      "a live step follows a rollout), a train step on the trainer's thread beside the engine\n"
      "(its slowdown, and its handoff: the wait to start on the idle thread and to hand its end back),\n"
      "and weight-sync time; R passes (default 3;\n"
      "medians and quartiles per shape are in the file). `april calibrate` fits the simulator to it.\n"
      "With --engine, an inference server over SGLang's HTTP API instead (SGLang or april serve), rollout side only:\n"
      "waves of B identical greedy requests (B = 1, 2, 4, ... up to its max_running_requests; prompts of 16 tokens\n"
      "and a quarter of its context) with max_new_tokens 1 (a prefill iteration) and N (then N - 1 decode\n"
      "iterations), an abort of every slot running, and a reload of the checkpoint it serves (the weight-load time).\n"
      "It assumes batched prefill (not april serve --exact-prefill). With --engine-api vllm, over vLLM's /v1/completions:\n"
      "the abort closes the streams, no weight load is timed, and --engine-slots gives the batches' bound.\n\noptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&a.scenario),
                                                 (scenario_help() + " whose live.* keys to use").c_str())(
      "device", po::value(&a.device), "cpu or cuda")("model", po::value(&a.model), "model size (overrides live.model)")(
      "repeats", integer_option(&a.repeats), "passes over the grid")("set", po::value(&a.sets), "override a key")(
      "out", po::value(&a.out)->required(), "profile.json")(
      "engine", po::value(&a.engine), "profile this server (http://host:port) over SGLang's HTTP API instead of april's engine")(
      "decode-tok", integer_option(&a.decode_tok), "with --engine: the decode window's tokens, N (default 32)")(
      "max-token-id", integer_option(&a.max_token_id), "with --engine: prompts draw token ids from 1 to this (default 100)")(
      "no-weight-load", po::bool_switch(&a.no_weight_load), "with --engine: do not time a reload of the served checkpoint")(
      "engine-api", po::value(&a.engine_api), "with --engine: sglang (default) or vllm (/v1/completions)")(
      "engine-slots", integer_option(&a.engine_slots),
      "with --engine: the most requests in a wave (default: the server's "
      "max_running_requests; a vLLM server says none: give its --max-num-seqs)");
  return opts;
}

// --engine: waves of requests to an inference server over HTTP.
int profile_server(const ProfileArgs& a) {
#ifdef APRIL_WITH_SERVE
  if (a.repeats < 1) throw std::invalid_argument(fmt::format("--repeats must be at least 1 (got {})", a.repeats));
  if (a.max_token_id < 1 || a.max_token_id > 1000000000) throw std::invalid_argument("--max-token-id: a token id from 1");
  check_output_file(a.out, "--out");
  live::HttpProfileOptions ho;
  ho.url = a.engine;
  ho.repeats = a.repeats;
  ho.decode_tok = a.decode_tok;
  ho.max_token_id = static_cast<std::int32_t>(a.max_token_id);
  ho.weight_load = !a.no_weight_load;
  if (engine_api_is_vllm(a.engine_api)) ho.api = live::ServerApi::kVllm;
  if (a.engine_slots < 0 || a.engine_slots > 1000000) {
    throw std::invalid_argument(fmt::format("--engine-slots {}: 0 (what the server says) or more", a.engine_slots));
  }
  ho.slots = a.engine_slots;
  if (ho.api == live::ServerApi::kVllm && a.engine_slots == 0) {
    throw std::invalid_argument("--engine-api vllm needs --engine-slots: vLLM does not say its --max-num-seqs over HTTP");
  }
  TerminalProgress progress("profile", "waves", 0);
  const auto p = live::profile_http_engine(ho, [&](std::int64_t done, std::int64_t total) {
    if (done == 1) progress.add_to_total(total);
    progress.update(done);
  });
  progress.finish();
  write_output_file(a.out, studies::profile_to_json(p).dump(2) + "\n");
  fmt::print("profiled {} at {}: {} iteration, {} abort, {} weight-load measurements; wrote {}\n", p.model, a.engine, p.iterations.size(),
             p.aborts.size(), p.sync_s.size(), a.out);
  return 0;
#else
  (void)a;
  throw std::invalid_argument("--engine: this april-live was built without cpp-httplib (Debian's libcpp-httplib-dev)");
#endif
}

}  // namespace

int profile_command(const std::vector<std::string>& args) {
  ProfileArgs a;
  const auto opts = profile_cli_options(a);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  if (!a.engine.empty()) return profile_server(a);
  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  base::Config c(schema);
  apply_cli_scenario(c, a.scenario, a.sets, std::nullopt, std::nullopt);
  if (!a.model.empty()) c.set(live::keys::kLiveModel, a.model, "--model");
  if (a.repeats < 1) throw std::invalid_argument(fmt::format("--repeats must be at least 1 (got {})", a.repeats));
  check_output_file(a.out, "--out");
  TerminalProgress progress("profile", "probes", 0);
  const auto p = live::profile_live(profile_options(c, a.device, a.repeats), [&](std::int64_t done, std::int64_t total) {
    if (done == 1) progress.add_to_total(total);
    progress.update(done);
  });
  progress.finish();
  write_output_file(a.out, studies::profile_to_json(p).dump(2) + "\n");
  fmt::print("profiled {} on {}: {} iteration, {} train, {} sync, {} abort measurements; wrote {}\n", p.model, p.device,
             p.iterations.size(), p.train.size(), p.sync_s.size(), p.aborts.size(), a.out);
  return 0;
}

}  // namespace april::cli
