#pragma once
// Parameter grids for whatif, sweep and tune: "KEY=V1,V2,..." axes, a
// ';'-separated list of them, and their cartesian product (first axis slowest).
#include <cstdint>
#include <string>
#include <vector>

namespace april::studies {

struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};

GridAxis parse_axis(const std::string& text);               // "KEY=V1,V2"
std::vector<GridAxis> parse_grid(const std::string& text);  // "K1=a,b;K2=c"
std::vector<std::vector<std::string>> cartesian(const std::vector<GridAxis>& axes);

// The runs of a study are built whole before the first one starts (each a
// scenario of a few KB): past kMaxStudyRuns a study is refused up front,
// with its size, rather than growing until the machine runs out of memory.
inline constexpr std::uint64_t kMaxStudyRuns = 1'000'000;
// Combinations x `per_combination` (seeds, policies), saturating at 2^64 - 1.
std::uint64_t study_runs(const std::vector<GridAxis>& axes, std::uint64_t per_combination);
// Throws std::invalid_argument naming `what` ("--grid x --repeats") when
// study_runs exceeds kMaxStudyRuns.
void check_study_size(const std::vector<GridAxis>& axes, std::uint64_t per_combination, const std::string& what);

}  // namespace april::studies
