// `april validate`: live runs beside their calibrated simulator twins (needs the live backend).
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

namespace {

// `april validate --quick`: 20 s on 2 CPU cores (2026-11-25), where the
// default (the small model, 30 steps, its profile in slices between them)
// takes tens of minutes: 4 steps of it took 11 minutes, the profile slices
// most of that.
constexpr std::int64_t kQuickSteps = 10;
constexpr const char* kQuickHelp =
    "a check in well under 2 minutes on 2 CPU cores (20 s measured; the default takes tens of minutes): the tiny "
    "model (32 wide, 2 layers) instead of small, 10 steps (the first a warm-up). It trades away the model's regime: "
    "the tiny model's iterations are mostly fixed overhead where the small one's are compute, so it checks the "
    "schedule, the calibration and the gains, not how the cost grows with batch and context";

// What `april validate`'s command line says, bound to the options that fill it.
struct ValidateArgs {
  std::string scenario = "live-cpu", device = "cpu", calibration, db_path, out_dir, timeline_path, timeline_detail = "steps", engines;
  std::vector<std::string> policy_args, sets;
  std::int64_t warmup_steps = 1;
  double engine_timeout_s = 600;
  std::string engine_api = "sglang";
  std::int64_t engine_slots = 0;
  bool quick = false;
  LiveTaskOptions task_options;
};

po::options_description validate_cli_options(ValidateArgs& a) {
  po::options_description opts(
      "usage: april validate [--scenario S] [--policy sync,april] [--steps N] [--warmup-steps W] [--quick]\n"
      "       april validate --engines URL,... --calibration MODEL.json --checkpoint DIR --dataset FILE [--policy sync,april]\n"
      "                      [--calibration MODEL.json] [--device cpu|cuda] [--db FILE] [--out DIR]\n"
      "                      [--timeline FILE [--timeline-detail steps|changes|windows]]\n"
      "Runs each policy live (taking turns step by step, so machine drift hits all alike), then in the\n"
      "simulator calibrated to the live engine on the live run's own sample lengths, and reports per-step\n"
      "rollout-time error (median, p90), total-time error and the gain over sync, measured vs predicted,\n"
      "with the gain error's 95% interval over the run's own steps (a paired bootstrap: how far it could\n"
      "move on other steps of the same run; wide means the run is too short or the machine too noisy).\n"
      "one_step_off and async train beside the engine live and run on a disaggregated twin (one GPU each);\n"
      "their steps are compared on step time. Each policy's live train steps are set against the model of\n"
      "them (overlapped: with the slowdown beside the engine they imply, against the profiled one), and an\n"
      "overlapped policy's live iterations beside a train step, median and in sum, against the profiled\n"
      "engine slowdown (a ratio of sums, as the twin applies it).\n"
      "Without --calibration, the engine is profiled in slices between the live steps and fitted; the slices\n"
      "also tell how much slower than on average the machine ran at each step (its points against their\n"
      "shapes' medians), and \"drift-adj\" is the median error with each twin step scaled by that. The\n"
      "profile's train steps on a live batch take each round's trained batches, one per policy in turn; its\n"
      "side-by-side probes start as an overlapped arm's step does, after another arm's turn (a second engine\n"
      "and trainer run a wave and a train step) and a weight copy.\n"
      "Before the first live step, one scratch train step (2 x B x n answers at the length cap) grows the\n"
      "heap, so no live step pays for new pages; --out's <policy>_live_train_steps.csv counts each step's\n"
      "page faults (minor_faults).\n"
      "The first W steps (default 1) run on both sides but are left out of the errors and gains: what\n"
      "they cost live beyond the model (first allocations) does not recur; their live/twin ratio is printed.\n\noptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&a.scenario), (scenario_help() + "; default live-cpu").c_str())(
      "policy", po::value(&a.policy_args), "policies (default sync,april)")("steps", integer_option(), "RL steps")(
      "quick", po::bool_switch(&a.quick), kQuickHelp)("warmup-steps", integer_option(&a.warmup_steps),
                                                      "leading steps left out of the errors and gains (default 1)")(
      "seed", integer_option(), "seed")("set", po::value(&a.sets), "override a key")(
      "calibration", po::value(&a.calibration), "a fragment from `april calibrate`")("device", po::value(&a.device), "cpu or cuda")(
      "db", po::value(&a.db_path), "store both sides of every run in this results database")(
      "out", po::value(&a.out_dir),
      "write report.json, each policy's live trace and, when profiled between the live steps, profile.json here")(
      "timeline", po::value(&a.timeline_path),
      "write each policy's live run and its simulator twin side by side as a Chrome trace-event "
      "JSON FILE (ui.perfetto.dev), each with its engine's track")(
      "timeline-detail", po::value(&a.timeline_detail),
      "steps (default: engine busy spans), changes (also the engines' running and "
      "queued requests and KV tokens at every change) or windows (changes, and every live iteration and every twin prefill "
      "iteration and decode window, in place of the busy spans)")(
      "engines", po::value(&a.engines),
      "instead of april's engine in process: rollout-only runs on these inference servers over "
      "SGLang's HTTP API (URL,...: SGLang or april serve), with --checkpoint and --dataset (the tokenizer and the prompts) and "
      "--calibration (a server's, from april profile --engine and april calibrate); the twin has one engine per server")(
      "engine-timeout", po::value(&a.engine_timeout_s)->default_value(600), "with --engines: seconds a /generate may take")(
      "engine-api", po::value(&a.engine_api), "with --engines: sglang (default) or vllm (/v1/completions, aborted by closing the stream)")(
      "engine-slots", integer_option(&a.engine_slots),
      "with --engines: requests sent to a server at once, the twin's slots (default: the "
      "server's max_running_requests; a vLLM server says none: give its --max-num-seqs)");
  a.task_options.add_to(opts);
  return opts;
}

// What --quick trades (kQuickHelp); an explicit --steps or --set live.model=... still wins.
void apply_quick(base::Config& c, const ValidateArgs& a, const po::variables_map& vm) {
  if (!a.quick) return;
  if (!vm.count("steps")) c.set(base::keys::kSteps, std::int64_t{kQuickSteps}, "--quick");
  bool model_given = false;
  for (const auto& s : a.sets) model_given = model_given || s.rfind("live.model=", 0) == 0;
  if (!model_given) c.set(live::keys::kLiveModel, std::string("tiny"), "--quick");
}

// A fragment from `april calibrate`: the fitted coefficients as scenario keys, read back.
studies::Calibration read_calibration(const std::string& path, const base::ConfigSchema& schema) {
  base::Config k(schema);
  base::load_config_file(k, path);
  return studies::calibration_from_config(k);
}

#ifdef APRIL_WITH_SERVE

// The servers of --engines, with live's sampling (top_p included).
live::HttpBackendOptions validate_http_options(const ValidateArgs& a, const base::Config& c) {
  auto ho = live::http_backend_options(c);
  ho.urls = split_urls(a.engines);
  if (!(a.engine_timeout_s > 0 && a.engine_timeout_s <= 1e6)) {
    throw std::invalid_argument(fmt::format("--engine-timeout {}: seconds above 0", a.engine_timeout_s));
  }
  ho.request_timeout_s = a.engine_timeout_s;
  if (engine_api_is_vllm(a.engine_api)) ho.api = live::ServerApi::kVllm;
  if (a.engine_slots < 0 || a.engine_slots > 1000000) {
    throw std::invalid_argument(fmt::format("--engine-slots {}: 0 (what the server says) or more", a.engine_slots));
  }
  if (ho.api == live::ServerApi::kVllm && a.engine_slots == 0) {
    throw std::invalid_argument(
        "--engine-api vllm needs --engine-slots: vLLM does not say its --max-num-seqs over HTTP, and the twin needs it");
  }
  ho.slots = a.engine_slots;
  return ho;
}

void print_engines_report(const studies::EnginesValidationReport& report, std::int64_t warmup_steps) {
  for (const auto& p : report.policies) {
    fmt::print("\n{} per step (rollout s): {:>5} {:>9} {:>9} {:>8}\n", p.policy, "step", "measured", "twin", "error");
    for (std::size_t s = 0; s < p.live.size(); ++s) {
      const double meas = p.live[s].rollout_time_s, pred = p.sim[s].rollout_time_s;
      fmt::print("{:>{}} {:>5} {:>9.3f} {:>9.3f} {:>8}{}\n", "", p.policy.size() + 25, s, meas, pred,
                 meas > 0 ? fmt::format("{:+.1f}%", 100 * (pred - meas) / meas) : std::string("-"),
                 static_cast<std::int64_t>(s) < warmup_steps ? "  (warm-up)" : "");
    }
  }
  fmt::print("\n{:<8} {:>12} {:>12} {:>12} {:>12} {:>10} {:>8}\n", "policy", "median err", "p90 err", "live tok/s", "twin tok/s",
             "requests", "aborted");
  for (const auto& p : report.policies) {
    fmt::print("{:<8} {:>11.1f}% {:>11.1f}% {:>12.0f} {:>12.0f} {:>10} {:>8}\n", p.policy, 100 * p.median_error, 100 * p.p90_error,
               p.live_rollout_tok_s, p.sim_rollout_tok_s, p.requests, p.aborted);
  }
  for (std::size_t i = 1; i < report.policies.size(); ++i) {
    if (!report.gain_measured[i]) continue;
    fmt::print("{} over {}, rollout throughput: measured {:+.1f}%, predicted {:+.1f}%\n", report.policies[i].policy,
               report.policies.front().policy, 100 * *report.gain_measured[i], 100 * *report.gain_predicted[i]);
  }
}

#endif

// --engines: rollout-only runs on inference servers against their calibrated twin.
int validate_on_servers(const ValidateArgs& a, const base::Config& c, const base::ConfigSchema& schema,
                        const policies::PolicyRegistry& registry, const std::vector<std::string>& policies) {
#ifdef APRIL_WITH_SERVE
  for (const auto& [given, name] : {std::pair{&a.db_path, "--db"}, {&a.timeline_path, "--timeline"}}) {
    if (!given->empty()) throw std::invalid_argument(fmt::format("{} is not built for validate --engines", name));
  }
  if (a.calibration.empty()) {
    throw std::invalid_argument("--engines needs --calibration: a server's, from `april profile --engine URL` and `april calibrate`");
  }
  if (a.task_options.checkpoint.empty())
    throw std::invalid_argument("--engines needs --checkpoint and --dataset: the tokenizer and the prompts");
  const auto cal = read_calibration(a.calibration, schema);
  std::optional<OutputFolder> out;
  if (!a.out_dir.empty()) out.emplace(a.out_dir, "--out");
  const auto choice = make_live_task(a.task_options, c, static_cast<std::int32_t>(c.get(base::keys::kMaxResponseLen)));
  const auto ho = validate_http_options(a, c);
  fmt::print("validate on {} server(s) ({}): {}, B = {} x n = {}, {} steps, the first {} left out\n", ho.urls.size(), a.engines,
             choice.task->describe(), c.get(base::keys::kRolloutBatchSize), c.get(base::keys::kSamplesPerPrompt), c.get(base::keys::kSteps),
             a.warmup_steps);
  fmt::print("calibration: {}\n", studies::describe(cal));
  std::fflush(stdout);
  const auto report = studies::validate_engines(c, registry, policies, *choice.task, cal, ho, a.warmup_steps, [](const std::string& line) {
    fmt::print("  {}\n", line);
    std::fflush(stdout);
  });
  print_engines_report(report, a.warmup_steps);
  if (out) {
    base::write_file_atomically((std::filesystem::path(out->path()) / "report.json").string(), report.to_json().dump(2) + "\n");
    out->commit();
    fmt::print("wrote {}/report.json\n", a.out_dir);
  }
  return 0;
#else
  (void)a;
  (void)c;
  (void)schema;
  (void)registry;
  (void)policies;
  throw std::invalid_argument("--engines: this april-live was built without cpp-httplib (Debian's libcpp-httplib-dev)");
#endif
}

// The live runs and their twins. Each line with the time since the start
// and, from the second live step on, an estimate of the time left at the
// pace of the live steps so far (they, and the profile slices between them,
// take nearly all of it).
studies::ValidationReport run_validation(const ValidateArgs& a, const base::Config& c, const policies::PolicyRegistry& registry,
                                         const std::vector<std::string>& policies, const std::optional<studies::Calibration>& given) {
  // The policies' live arms take turns, one step each: the side-by-side
  // probe starts after another arm's turn, as their overlapped steps do.
  auto profile = profile_options(c, a.device, live::ProfileOptions{}.repeats);
  profile.contention_after_other_arm = true;
  const auto start = std::chrono::steady_clock::now();
  const auto seconds_since_start = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  double first_share = 0, first_at_s = 0;
  return studies::validate(
      c, registry, policies, given, profile, a.device,
      [&](const std::string& line, double live_share_done) {
        const double now_s = seconds_since_start();
        std::string eta;
        if (live_share_done > 0 && first_share == 0) {
          first_share = live_share_done;
          first_at_s = now_s;
        } else if (live_share_done > first_share && live_share_done < 1) {
          const double pace_s = (now_s - first_at_s) / (live_share_done - first_share);
          eta = fmt::format(", about {:.0f} s left", pace_s * (1 - live_share_done));
        }
        fmt::print("  [{:.0f} s{}] {}\n", now_s, eta, line);
        std::fflush(stdout);
      },
      a.warmup_steps);
}

// Live and twin of each policy one above the other, both from their first
// step's start: where the model's schedule and the engine's part.
void write_validate_timeline(const std::string& path, const studies::ValidationReport& report, rl::TimelineDetail detail) {
  base::ChromeTrace chrome;
  std::int64_t pid = 1;
  for (const auto& p : report.policies) {
    // The live run's clock also ran while the other policies and the profile
    // slices took their turns: its steps laid end to end, as the twin's are,
    // and its engine's records moved with them.
    const auto live = rl::without_gaps_between_steps(p.live);
    auto live_changes = p.live_engine_changes;
    auto live_windows = p.live_engine_windows;
    rl::remove_gaps_between_steps(p.live, live_changes, live_windows);
    const double live_origin = live.empty() ? 0.0 : live.front().start_time_s;
    const double twin_origin = p.sim.empty() ? 0.0 : p.sim.front().start_time_s;
    rl::RunTimeline live_run{p.policy + " live", 1, &live, &live_changes, live_origin};
    live_run.engine_windows = &live_windows;
    rl::RunTimeline twin_run{p.policy + " twin", 1, &p.sim, &p.sim_engine_changes, twin_origin};
    twin_run.engine_windows = &p.sim_engine_windows;
    rl::add_run_timeline(chrome, live_run, pid, detail);
    rl::add_run_timeline(chrome, twin_run, pid + 2, detail);
    pid += 4;
  }
  write_output_file(path, chrome.text());
  fmt::print("wrote {} ({} trace events; open it in ui.perfetto.dev)\n", path, chrome.events());
}

// The calibration, then one line per policy: steps, instant steps, errors, throughputs.
void print_policy_errors(const studies::ValidationReport& report) {
  fmt::print("calibration{}: {}\n", report.profiled_interleaved ? " (profiled between the live steps)" : "",
             studies::describe(report.calibration));
  fmt::print("\n{:<8} {:>6} {:>8} {:>9} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "policy", "steps", "instant", "same tok",
             "median err", "drift-adj", "p90 err", "total err", "live tok/s", "sim tok/s");
  for (const auto& p : report.policies) {
    const std::string adjusted = p.median_error_drift_adjusted ? fmt::format("{:.1f}%", 100 * *p.median_error_drift_adjusted) : "-";
    fmt::print("{:<8} {:>6} {:>4}/{:<3} {:>9} {:>11.1f}% {:>12} {:>11.1f}% {:>+11.1f}% {:>12.0f} {:>12.0f}\n", p.policy, p.live.size(),
               p.instant_agree, p.instant_steps, p.steps_same_tokens, 100 * p.median_error, adjusted, 100 * p.p90_error,
               100 * p.total_time_error, p.live_rollout_tok_s, p.sim_rollout_tok_s);
  }
  for (const auto& p : report.policies) {
    if (!p.effective_gain_measured) continue;
    const auto& ci = p.effective_gain_error_interval;
    fmt::print("{} over sync, effective throughput (trained tok / total s): measured {:+.1f}%, predicted {:+.1f}% ({:+.1f} pp{})\n",
               p.policy, 100 * *p.effective_gain_measured, 100 * *p.effective_gain_predicted,
               100 * (*p.effective_gain_predicted - *p.effective_gain_measured),
               ci ? fmt::format("; over this run's steps, 95%: {:+.1f} to {:+.1f}", ci->lo_pp, ci->hi_pp) : std::string());
  }
}

// Each policy's live train steps (and, overlapped, its iterations beside
// them) against the model of them.
void print_model_ratios(const studies::ValidationReport& report) {
  const auto& cal = report.calibration;
  const auto ratio = [](const std::optional<double>& r) { return r ? fmt::format("{:.2f}", *r) : std::string("-"); };
  bool any_overlapped = false;
  for (const auto& p : report.policies) {
    if (!p.overlapped) {
      fmt::print("{}: live train step compute time / calibrated prediction, median: {}\n", p.policy, ratio(p.train_ratio));
      continue;
    }
    any_overlapped = true;
    fmt::print(
        "{}: live iteration time / calibrated prediction, median (in sum): {} ({}) beside a computing train step, "
        "profiled {:.2f} in sum; {} ({}) alone\n",
        p.policy, ratio(p.iteration_ratio_beside_train), ratio(p.iteration_sum_ratio_beside_train), cal.engine_slowdown_beside_train,
        ratio(p.iteration_ratio_alone), ratio(p.iteration_sum_ratio_alone));
    fmt::print(
        "{}: live train step compute time / the twin's model of it, median: {} (the engine ran beside {:.0f}% of it); "
        "slowdown beside the engine the steps imply: {} (profiled {:.2f})\n",
        p.policy, ratio(p.train_ratio), 100 * p.train_beside_engine_share, ratio(p.train_slowdown_implied),
        report.calibration.train_slowdown_beside_engines);
  }
  if (any_overlapped) {
    fmt::print(
        "overlapped policies: the trainer runs beside the engine (one thread each) and the twin is disaggregated (one GPU\n"
        "each); err compares whole steps; the twin slows iterations that start beside a train step and train steps while\n"
        "the engine runs by the profiled factors (\"side by side\" on the calibration line; the ratios above\n"
        "are the live run's own), and adds the profiled train handoff to each train step\n");
  }
}

// The warm-up steps, the machine's drift, what the columns mean, and the rollout gain.
void print_report_notes(const studies::ValidationReport& report) {
  if (report.warmup_steps > 0) {
    std::string ratios;
    for (const auto& p : report.policies) {
      ratios += fmt::format("{}{} {:.2f}", ratios.empty() ? "" : "; ", p.policy, fmt::join(p.warmup_live_over_sim, " "));
    }
    fmt::print("warm-up: the first {} step(s), left out of the errors and gains above; live / twin step time: {}\n", report.warmup_steps,
               ratios);
  }
  if (!report.machine_slowdown_by_step.empty()) {
    std::vector<double> known;
    for (const auto& m : report.machine_slowdown_by_step) {
      if (m) known.push_back(*m);
    }
    const auto [lo, hi] = known.empty()
                              ? std::pair{1.0, 1.0}
                              : std::pair{*std::min_element(known.begin(), known.end()), *std::max_element(known.begin(), known.end())};
    fmt::print(
        "drift-adj: the median error with each twin step scaled by how much slower than on average the machine ran then,\n"
        "by the profile's slices beside the step (x{:.2f} to x{:.2f} in this run): the machine's drift, which no fixed\n"
        "model predicts, taken out; the gains need no such help (the policies take turns, so drift hits all alike)\n",
        lo, hi);
  }
  fmt::print("instant: steps whose batch was complete in the buffer (no rollout time), predicted as such / seen\n");
  fmt::print("same tok: steps whose rollout decoded as many tokens in the simulator as live (it replays the live schedule)\n");
  if (report.gain_measured && report.gain_predicted) {
    fmt::print("gain over sync (rollout throughput): measured {:+.1f}%, predicted {:+.1f}% ({:+.1f} pp)\n", 100 * *report.gain_measured,
               100 * *report.gain_predicted, 100 * (*report.gain_predicted - *report.gain_measured));
  }
}

// One policy's live trace, iterations and train steps, each with what the calibration predicts for it.
void write_policy_files(const std::filesystem::path& dir, const studies::PolicyValidation& p, const studies::Calibration& cal) {
  traces::write_jsonl_trace((dir / (p.policy + "_trace.jsonl")).string(), p.trace);
  // predicted_s is the model alone: an iteration beside a computing train
  // step is predicted at engine.slowdown_beside_train times it.
  std::string csv = "step,batch,kv_tok,prefill_requests,prefill_tok,prefill_longest_tok,beside_train,time_s,predicted_s\n";
  for (std::size_t step = 0; step < p.live_iterations.size(); ++step) {
    for (const auto& it : p.live_iterations[step]) {
      csv += fmt::format("{},{},{},{},{},{},{:d},{:.6f},{:.6f}\n", step, it.batch, it.kv_tok, it.prefill_requests, it.prefill_tok,
                         it.prefill_longest_tok, it.beside_train, it.time_s, studies::predicted_iteration_s(cal, it));
    }
  }
  base::write_file_atomically((dir / (p.policy + "_live_iterations.csv")).string(), csv);
  // Every live train step: its shape, compute time, the engine's time
  // beside it, the model's time for it alone, and its page faults (a step
  // that grew the heap is slower than its shape says).
  std::string train_csv = "step,samples,tokens,longest_tok,time_s,beside_engine_s,predicted_alone_s,minor_faults\n";
  for (std::size_t step = 0; step < p.live_train_steps.size(); ++step) {
    for (const auto& t : p.live_train_steps[step]) {
      train_csv += fmt::format("{},{},{},{},{:.6f},{:.6f},{:.6f},{}\n", step, t.point.samples, t.point.tokens, t.point.longest_tok,
                               t.point.time_s, t.beside_engine_s, studies::predicted_train_s(cal, t.point), t.minor_faults);
    }
  }
  base::write_file_atomically((dir / (p.policy + "_live_train_steps.csv")).string(), train_csv);
}

void write_validate_outputs(OutputFolder& out, const std::string& out_dir, const studies::ValidationReport& report, const base::Config& c) {
  const std::filesystem::path dir = out.path();
  const auto& cal = report.calibration;
  auto j = report.to_json();
  j["scenario"] = c.resolved();
  j["calibration"] = studies::calibration_scenario_json(cal);
  base::write_file_atomically((dir / "report.json").string(), j.dump(2) + "\n");
  // The profile fitted between the live steps: `april calibrate` re-fits it,
  // and its points show what the fit made of the machine.
  if (report.profile)
    base::write_file_atomically((dir / "profile.json").string(), studies::profile_to_json(*report.profile).dump(2) + "\n");
  for (const auto& p : report.policies) write_policy_files(dir, p, cal);
  out.commit();
  fmt::print("wrote {0}/report.json and {0}/<policy>_trace.jsonl\n", out_dir);
}

// Both sides of every policy's run, as one sweep of the results database.
void store_validate_runs(studies::ResultsDb& db, const ValidateArgs& a, const std::vector<std::string>& policies, const base::Config& c,
                         const studies::ValidationReport& report) {
  const auto now = studies::utc_now_iso8601();
  const auto sweep = db.sweep_id("validate", a.scenario,
                                 fmt::format("policies={};steps={};at={}", fmt::join(policies, ","), c.get(base::keys::kSteps), now));
  const base::Config twin = studies::simulator_twin(c, report.calibration);
  for (const auto& p : report.policies) {
    for (const std::string side : {"live", "sim"}) {
      studies::RunRecord r;
      const auto& steps = side == "live" ? p.live : p.sim;
      r.scenario = (side == "live" ? c : twin).resolved();
      r.scenario_hash = base::hash_hex(r.scenario.dump());
      r.run_key = base::hash_hex(fmt::format("validate {} {} {} {}", sweep, side, p.policy, now));
      r.policy = p.policy;
      r.seed = c.get(base::keys::kSeed);
      r.model_version = scenario::kModelVersion;
      r.started_at = r.finished_at = now;
      r.summary = rl::summary_json(rl::summarize(steps));
      r.steps = steps;
      db.store_run(sweep, r, {{"side", side}, {"policy", p.policy}});
    }
  }
  fmt::print("stored both sides as sweep {} in {}\n", sweep, a.db_path);
}

}  // namespace

int validate_command(const std::vector<std::string>& args) {
  ValidateArgs a;
  const auto opts = validate_cli_options(a);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  base::Config c(schema);
  apply_cli_scenario(c, a.scenario, a.sets, opt_int(vm, "steps"), opt_int(vm, "seed"));
  apply_quick(c, a, vm);
  const auto policies = policy_list(a.policy_args, registry, {"sync", "april"});
  if (a.warmup_steps < 0 || a.warmup_steps >= c.get(base::keys::kSteps)) {
    throw std::invalid_argument(
        fmt::format("--warmup-steps {}: must be at least 0 and fewer than the {} steps", a.warmup_steps, c.get(base::keys::kSteps)));
  }

  if (a.engines.empty() && !a.task_options.checkpoint.empty()) {
    throw std::invalid_argument("--checkpoint: april validate runs Hugging Face checkpoints on servers only: give --engines");
  }
  if (!a.engines.empty()) return validate_on_servers(a, c, schema, registry, policies);

  std::optional<studies::Calibration> given;
  if (!a.calibration.empty())
    given = read_calibration(a.calibration, schema);
  else
    fmt::print("profiling the live engine in slices between the live steps\n");
  std::fflush(stdout);
  std::optional<OutputFolder> out;
  if (a.timeline_path == "-") throw std::invalid_argument("--timeline -: a timeline is written to a file, not to standard output");
  if (!a.timeline_path.empty()) check_output_file(a.timeline_path, "--timeline");
  const auto detail = rl::parse_timeline_detail(a.timeline_detail);
  if (!a.out_dir.empty()) out.emplace(a.out_dir, "--out");
  std::optional<studies::ResultsDb> db;
  if (!a.db_path.empty()) db.emplace(a.db_path);
  const auto report = run_validation(a, c, registry, policies, given);
  if (!a.timeline_path.empty()) write_validate_timeline(a.timeline_path, report, detail);
  print_policy_errors(report);
  print_model_ratios(report);
  print_report_notes(report);
  if (out) write_validate_outputs(*out, a.out_dir, report, c);
  if (db) store_validate_runs(*db, a, policies, c, report);
  return 0;
}

}  // namespace april::cli
