#include "studies/grid.hpp"

#include <fmt/format.h>

#include <sstream>
#include <stdexcept>

namespace april::studies {

GridAxis parse_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw std::invalid_argument(fmt::format("grid axis '{}': expected KEY=V1,V2,...", text));
  }
  GridAxis a{text.substr(0, eq), {}};
  std::stringstream ss(text.substr(eq + 1));
  std::string v;
  while (std::getline(ss, v, ',')) {
    if (!v.empty()) a.values.push_back(v);
  }
  if (a.values.empty()) throw std::invalid_argument(fmt::format("grid axis '{}': no values", text));
  return a;
}

std::vector<GridAxis> parse_grid(const std::string& text) {
  std::vector<GridAxis> axes;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ';')) {
    if (part.find_first_not_of(" ") == std::string::npos) continue;
    axes.push_back(parse_axis(part));
    for (std::size_t i = 0; i + 1 < axes.size(); ++i) {
      if (axes[i].key == axes.back().key) throw std::invalid_argument(fmt::format("grid: key '{}' appears twice", axes.back().key));
    }
  }
  if (axes.empty()) throw std::invalid_argument("grid: no axes");
  return axes;
}

std::vector<std::vector<std::string>> cartesian(const std::vector<GridAxis>& axes) {
  std::vector<std::vector<std::string>> combos{{}};
  for (const auto& a : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& c : combos) {
      for (const auto& v : a.values) {
        auto n = c;
        n.push_back(v);
        next.push_back(std::move(n));
      }
    }
    combos = std::move(next);
  }
  return combos;
}

std::uint64_t study_runs(const std::vector<GridAxis>& axes, std::uint64_t per_combination) {
  constexpr std::uint64_t kMax = ~std::uint64_t{0};
  std::uint64_t n = per_combination;
  for (const auto& a : axes) {
    const auto k = static_cast<std::uint64_t>(a.values.size());
    n = (k != 0 && n > kMax / k) ? kMax : n * k;
  }
  return n;
}

void check_study_size(const std::vector<GridAxis>& axes, std::uint64_t per_combination, const std::string& what) {
  const auto n = study_runs(axes, per_combination);
  if (n > kMaxStudyRuns) {
    throw std::invalid_argument(
        fmt::format("{} makes {} runs, more than the {} one study holds (its runs are built before the first starts, a few KB each: "
                    "about {:.0f} GB); split it into several studies",
                    what, n == ~std::uint64_t{0} ? std::string("over 1.8e19") : std::to_string(n), kMaxStudyRuns,
                    static_cast<double>(n) * 4096.0 / 1e9));
  }
}

}  // namespace april::studies
