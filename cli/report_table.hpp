#pragma once
// The comparison table `april simulate` prints.
#include <string>
#include <vector>

#include "scenario/simulation.hpp"

namespace april::cli {

void print_scenario_header(const base::Config& config, const std::string& scenario, const std::string& trace);
void print_report_table(const std::vector<scenario::RunResult>& results);

}  // namespace april::cli
