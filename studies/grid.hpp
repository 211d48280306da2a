#pragma once
// Parameter grids for whatif, sweep and tune: "KEY=V1,V2,..." axes, a
// ';'-separated list of them, and their cartesian product (first axis slowest).
#include <string>
#include <vector>

namespace april::studies {

struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};

GridAxis parse_axis(const std::string& text);              // "KEY=V1,V2"
std::vector<GridAxis> parse_grid(const std::string& text);  // "K1=a,b;K2=c"
std::vector<std::vector<std::string>> cartesian(const std::vector<GridAxis>& axes);

}  // namespace april::studies
