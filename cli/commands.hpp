#pragma once
// Subcommands of the `april` program. Each returns the process exit code.
#include <string>
#include <vector>

namespace april::cli {

int simulate_command(const std::vector<std::string>& args);
int policies_command(const std::vector<std::string>& args);
int keys_command(const std::vector<std::string>& args);
int trace_command(const std::vector<std::string>& args);
int whatif_command(const std::vector<std::string>& args);
int sweep_command(const std::vector<std::string>& args);
int tune_command(const std::vector<std::string>& args);
int db_command(const std::vector<std::string>& args);
int model_command(const std::vector<std::string>& args);
int hardware_command(const std::vector<std::string>& args);
int reproduce_command(const std::vector<std::string>& args);
int components_command(const std::vector<std::string>& args);
int plan_command(const std::vector<std::string>& args);
// In `april-live` only (they need the live backend).
int live_command(const std::vector<std::string>& args);
int profile_command(const std::vector<std::string>& args);
int validate_command(const std::vector<std::string>& args);
int generate_command(const std::vector<std::string>& args);
int serve_command(const std::vector<std::string>& args);
int calibrate_command(const std::vector<std::string>& args);

}  // namespace april::cli
