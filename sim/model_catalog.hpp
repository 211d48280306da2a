#pragma once
// The built-in models: config.json files shipped in sim/models/ (compiled in)
// with each one's source and published size, and the one way a scenario's
// `model` value becomes a ModelArch: a built-in name, a config.json, or a
// folder holding one.
#include <string>
#include <utility>
#include <vector>

#include "sim/model_arch.hpp"

namespace april::sim {

struct BuiltinModel {
  std::string name;
  double published_total_params = 0;   // as the model card counts it
  double published_active_params = 0;  // equal to total for dense models
  std::string citation;                // model card and config.json it comes from
};

const std::vector<BuiltinModel>& builtin_model_table();
std::vector<std::string> builtin_model_names();
// (name, config.json text) of every file in sim/models/; generated at build time.
const std::vector<std::pair<std::string, std::string>>& builtin_model_config_texts();

// A built-in name, else the path of a config.json or of a folder holding one.
// Throws base::ConfigError naming the value, the built-in names, and the file
// and field of any error in a config it reads.
ModelArch resolve_model(const std::string& name_or_path);

}  // namespace april::sim
