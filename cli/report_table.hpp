#pragma once
// The comparison table `april simulate` prints.
#include <string>
#include <vector>

#include "adapters/simulation.hpp"

namespace april::cli {

void print_scenario_header(const sim::Config& config, const std::string& scenario, const std::string& trace);
void print_report_table(const std::vector<adapters::RunResult>& results);

}  // namespace april::cli
