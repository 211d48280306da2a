// april: rollout scheduling for RL post-training of LLMs.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/live_delegate.hpp"

namespace {

constexpr const char* kUsage =
    "usage: april <command> [options]\n"
    "\n"
    "commands:\n"
    "  simulate   simulate rollout policies on a scenario and compare them\n"
    "  whatif     what-if capacity study: vary scenario keys, compare step time, throughput, GPU-hours\n"
    "  sweep      run a grid of configurations x seeds in parallel into a SQLite results database\n"
    "  tune       find the best value of a parameter (e.g. april.alpha) under constraints\n"
    "  db         list, show and export what the results database holds\n"
    "  trace      trace tools: import, stats, fit, synth\n"
    "  live       train a transformer with GRPO on a real engine, driven by the same policies (libtorch)\n"
    "  profile    measure the live engine, trainer and weight sync for calibration (libtorch)\n"
    "  calibrate  fit the simulator's engine, train and sync models to a profile\n"
    "  validate   run policies live and in the calibrated simulator and compare (libtorch)\n"
    "  policies   list scheduling policies with their parameters and defaults\n"
    "  keys       list every scenario key with unit, default and meaning (--markdown)\n"
    "\n"
    "`april <command> --help` describes a command.\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    // No command: the main job, on the built-in default scenario.
    args = {"simulate"};
  }
  const std::string cmd = args.front();
  args.erase(args.begin());
  try {
    if (cmd == "simulate") return april::cli::simulate_command(args);
    if (cmd == "policies") return april::cli::policies_command(args);
    if (cmd == "keys") return april::cli::keys_command(args);
    if (cmd == "trace") return april::cli::trace_command(args);
    if (cmd == "whatif") return april::cli::whatif_command(args);
    if (cmd == "sweep") return april::cli::sweep_command(args);
    if (cmd == "tune") return april::cli::tune_command(args);
    if (cmd == "db") return april::cli::db_command(args);
    if (cmd == "calibrate") return april::cli::calibrate_command(args);
    if (cmd == "live" || cmd == "profile" || cmd == "validate") return april::cli::run_live_program(cmd, args);
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    fmt::print(stderr, "april: unknown command '{}'\n\n{}", cmd, kUsage);
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "april {}: error: {}\n", cmd, e.what());
    return 1;
  }
}
