#include "cli/live_delegate.hpp"

#include "base/huge_page_heap.hpp"
#include "cli/program_exit.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace april::cli {

int run_live_program(const std::string& command, const std::vector<std::string>& args) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto live = self.parent_path() / "april-live";
  if (ec || !std::filesystem::exists(live)) {
    print_error(
        fmt::format("april {}: this build has no live backend: {} is missing (libtorch was not found when building; "
                    "see APRIL_WITH_TORCH in the README)",
                    command, ec ? std::string("april-live") : live.string()));
    return 2;
  }
  std::vector<std::string> words = {live.string(), command};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  // april-live's heap is tuned and measured as the user starts it.
  base::restore_tunables_for_children();
  ::execv(live.c_str(), argv.data());
  print_error(fmt::format("april {}: cannot run {}: {}", command, live.string(), std::strerror(errno)));
  return 2;
}

}  // namespace april::cli
