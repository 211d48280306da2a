// april: rollout scheduling for RL post-training of LLMs.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "base/heap_retention.hpp"
#include "base/huge_page_heap.hpp"
#include "base/out_of_memory.hpp"
#include "cli/commands.hpp"
#include "cli/live_delegate.hpp"
#include "cli/program_exit.hpp"

namespace {

constexpr const char* kUsage =
    "usage: april <command> [options]\n"
    "  A bare `april` runs `april simulate` on the built-in default scenario.\n"
    "\n"
    "commands:\n"
    "  simulate   simulate rollout policies on a scenario and compare them\n"
    "  whatif     what-if capacity study: vary scenario keys, compare step time, throughput, GPU-hours\n"
    "  sweep      run a grid of configurations x seeds in parallel into a SQLite results database\n"
    "  tune       find the best value of a parameter (e.g. april.alpha) under constraints\n"
    "  plan       every rollout design x over-provisioning x engine size x GPU split on your cluster, ranked\n"
    "  db         list, show and export what the results database holds\n"
    "  trace      trace tools: import, stats, fit, synth\n"
    "  live       train a transformer with GRPO on a real engine, driven by the same policies (libtorch)\n"
    "  profile    measure the live engine, trainer and weight sync for calibration (libtorch)\n"
    "  calibrate  fit the simulator's engine, train and sync models to a profile\n"
    "  validate   run policies live and in the calibrated simulator and compare (libtorch)\n"
    "  generate   run one prompt through a Hugging Face checkpoint (libtorch)\n"
    "  serve      serve a Hugging Face checkpoint over SGLang's HTTP API subset (libtorch)\n"
    "  model      show a model's parameters, weight and KV bytes, FLOPs and engine memory (built-in or config.json)\n"
    "  hardware   show the built-in accelerators (or a hardware file): FLOP/s, HBM, links, node shape\n"
    "  reproduce  published runs (verl's, ...) beside april's predictions, with the errors\n"
    "  components the engine and trainer models against published serving and training benchmarks, fitted\n"
    "  policies   list scheduling policies with their parameters and defaults\n"
    "  keys       list every scenario key with unit, default and meaning (--markdown)\n"
    "\n"
    "`april <command> --help` describes a command.\n";

}  // namespace

namespace {

int run_command(const std::string& cmd, const std::vector<std::string>& args) {
  using namespace april::cli;
  if (cmd == "simulate") return simulate_command(args);
  if (cmd == "policies") return policies_command(args);
  if (cmd == "keys") return keys_command(args);
  if (cmd == "trace") return trace_command(args);
  if (cmd == "whatif") return whatif_command(args);
  if (cmd == "sweep") return sweep_command(args);
  if (cmd == "tune") return tune_command(args);
  if (cmd == "db") return db_command(args);
  if (cmd == "model") return model_command(args);
  if (cmd == "hardware") return hardware_command(args);
  if (cmd == "reproduce") return reproduce_command(args);
  if (cmd == "components") return components_command(args);
  if (cmd == "plan") return plan_command(args);
  if (cmd == "calibrate") return calibrate_command(args);
  if (cmd == "live" || cmd == "profile" || cmd == "validate" || cmd == "generate" || cmd == "serve") return run_live_program(cmd, args);
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  print_error(fmt::format("april: unknown command '{}'\n\n{}", cmd, kUsage));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Large clusters' runs wait on memory: the heap on huge pages (base/huge_page_heap.hpp).
  april::base::reexec_with_huge_page_heap(argv);
  // And kept between steps, not faulted in again (base/heap_retention.hpp).
  april::base::retain_freed_heap();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    // No command: the main job, on the built-in default scenario.
    args = {"simulate"};
  }
  const std::string cmd = args.front();
  args.erase(args.begin());
  int rc = 1;
  try {
    rc = run_command(cmd, args);
  } catch (const std::system_error& e) {
    if (std::ferror(stdout) != 0) {
      // fmt threw writing a long output to a full or closed standard output
      // ("cannot write to file"): said once, in our words, with the reason.
      april::cli::print_error(fmt::format("april {}: error: cannot write to standard output: {}", cmd, e.code().message()));
      return 1;
    }
    april::cli::print_error(fmt::format("april {}: error: {}", cmd, e.what()));
    rc = 1;
  } catch (const std::bad_alloc&) {
    april::cli::print_error(fmt::format("april {}: error: {}", cmd, april::base::kOutOfMemory));
    rc = 1;
  } catch (const std::exception& e) {
    april::cli::print_error(fmt::format("april {}: error: {}", cmd, e.what()));
    rc = 1;
  }
  return april::cli::finish_output("april " + cmd, rc);
}
