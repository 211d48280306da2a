// april-live: the commands of `april` that run the libtorch engine. `april
// live|profile|validate` hand over to this program; it can also be run alone.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "adapters/live/cpu_runtime.hpp"
#include "base/out_of_memory.hpp"
#include "cli/commands.hpp"
#include "cli/program_exit.hpp"

namespace {

constexpr const char* kUsage =
    "usage: april-live <command> [options]   (or: april <command> [options])\n"
    "\n"
    "commands:\n"
    "  live       train a transformer with GRPO on a real engine, driven by the same policies (libtorch)\n"
    "  profile    measure the live engine, trainer and weight sync for calibration (libtorch)\n"
    "  validate   run policies live and in the calibrated simulator and compare (libtorch)\n"
    "  generate   run one prompt through a Hugging Face checkpoint (libtorch)\n"
    "  serve      serve a Hugging Face checkpoint over SGLang's HTTP API subset (libtorch)\n"
    "\n"
    "`april-live <command> --help` describes a command.\n";

}  // namespace

int main(int argc, char** argv) {
  // Before anything starts a thread: see configure_allocator.
  april::live::configure_allocator();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args.front() == "--help" || args.front() == "-h" || args.front() == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return april::cli::finish_output("april-live", args.empty() ? 2 : 0);
  }
  const std::string cmd = args.front();
  args.erase(args.begin());
  int rc = 1;
  try {
    if (cmd == "live")
      rc = april::cli::live_command(args);
    else if (cmd == "profile")
      rc = april::cli::profile_command(args);
    else if (cmd == "validate")
      rc = april::cli::validate_command(args);
    else if (cmd == "generate")
      rc = april::cli::generate_command(args);
    else if (cmd == "serve") {
#ifdef APRIL_WITH_SERVE
      rc = april::cli::serve_command(args);
#else
      april::cli::print_error(
          "april serve: this april-live was built without cpp-httplib (Debian's libcpp-httplib-dev; scripts/setup.sh installs it)");
      rc = 2;
#endif
    } else {
      april::cli::print_error(fmt::format("april-live: unknown command '{}'\n\n{}", cmd, kUsage));
      rc = 2;
    }
  } catch (const std::bad_alloc&) {
    april::cli::print_error(fmt::format("april {}: error: {}", cmd, april::base::kOutOfMemory));
    rc = 1;
  } catch (const std::exception& e) {
    april::cli::print_error(fmt::format("april {}: error: {}", cmd, e.what()));
    rc = 1;
  }
  return april::cli::finish_output("april " + cmd, rc);
}
