#pragma once
// `april live|profile|validate` run in the separate `april-live` program, so
// that `april` itself never loads libtorch (about 0.6 s and 160 MB at start).
#include <string>
#include <vector>

namespace april::cli {

// Replaces this process with `april-live <command> <args...>` from the folder
// that holds this executable. Returns only on failure, with an exit code,
// after printing why (no live backend in this build, or exec failed).
int run_live_program(const std::string& command, const std::vector<std::string>& args);

}  // namespace april::cli
