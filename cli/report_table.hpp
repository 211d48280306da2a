#pragma once
// The comparison table `april simulate` prints.
#include <set>
#include <string>
#include <vector>

#include "scenario/design_space.hpp"
#include "scenario/simulation.hpp"
#include "sim/cluster_shape.hpp"

namespace april::cli {

// One policy's run and the cluster it ran on.
struct ReportRow {
  scenario::RunResult run;
  sim::ClusterShape shape;
  std::vector<scenario::SplitTrial> split_trials;  // non-empty: the split was chosen among these
};

void print_scenario_header(const base::Config& config, const scenario::ResolvedScenario& resolved, const std::string& scenario,
                           const std::string& trace);
void print_report_table(const std::vector<ReportRow>& rows);

// whatif, tune and sweep read layouts as simulate does: where one leaves
// GPUs idle through every rollout (sim::idle_gpus_note), the note is printed,
// once per distinct note (`printed` holds those already said).
void print_idle_gpus_note(const base::Config& config, std::set<std::string>& printed);

}  // namespace april::cli
