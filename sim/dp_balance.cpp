#include "sim/dp_balance.hpp"

#include <algorithm>
#include <numeric>
#include <queue>
#include <stdexcept>

namespace april::sim {

namespace {

// One partition being built: its rows and their token sum.
struct Part {
  std::int64_t sum = 0;
  std::vector<std::size_t> rows;
};

// verl's Set order: by sum, then by count, then by the rows themselves.
bool part_less(const Part& a, const Part& b) {
  if (a.sum != b.sum) return a.sum < b.sum;
  if (a.rows.size() != b.rows.size()) return a.rows.size() < b.rows.size();
  return a.rows < b.rows;
}

// k partitions, kept in decreasing order (verl's State).
struct State {
  std::vector<Part> parts;
  std::uint64_t seq = 0;  // creation order: our tie-break where verl's heap has none of its own
  [[nodiscard]] std::int64_t spread() const { return parts.front().sum - parts.back().sum; }
  void sort_parts() {
    std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return part_less(b, a); });
  }
};

// The state popped first: the largest spread, then the largest first part.
struct PopsLater {
  bool operator()(const State* a, const State* b) const {
    if (a->spread() != b->spread()) return a->spread() < b->spread();
    if (part_less(a->parts.front(), b->parts.front()) || part_less(b->parts.front(), a->parts.front())) {
      return part_less(a->parts.front(), b->parts.front());
    }
    return a->seq > b->seq;
  }
};

}  // namespace

std::vector<std::vector<std::size_t>> balanced_partitions(const std::vector<std::int64_t>& tokens, std::size_t k) {
  if (k == 0) throw std::invalid_argument("balanced_partitions: no partitions");
  // Rows beyond the input are empty padding (0 tokens) so that k divides the count.
  const std::size_t n = (tokens.size() + k - 1) / k * k;
  std::vector<std::pair<std::int64_t, std::size_t>> sorted;
  sorted.reserve(n);
  for (std::size_t i = 0; i < n; ++i) sorted.emplace_back(i < tokens.size() ? tokens[i] : 0, i);
  std::sort(sorted.begin(), sorted.end());
  // Each k consecutive rows of the sorted list start as one state, one row per partition.
  std::vector<State> states(n / k);
  std::priority_queue<State*, std::vector<State*>, PopsLater> heap;
  for (std::size_t s = 0; s < states.size(); ++s) {
    State& st = states[s];
    st.seq = s;
    st.parts.resize(k);
    for (std::size_t i = 0; i < k; ++i) {
      st.parts[i].sum = sorted[s * k + i].first;
      st.parts[i].rows.push_back(sorted[s * k + i].second);
    }
    st.sort_parts();
    heap.push(&st);
  }
  std::uint64_t next_seq = states.size();
  // Largest differencing: merge the two states of largest spread, the first's
  // largest partition with the second's smallest.
  while (heap.size() > 1) {
    State* a = heap.top();
    heap.pop();
    State* b = heap.top();
    heap.pop();
    for (std::size_t i = 0; i < k; ++i) {
      Part& into = a->parts[i];
      Part& from = b->parts[k - 1 - i];
      into.sum += from.sum;
      into.rows.insert(into.rows.end(), from.rows.begin(), from.rows.end());
      from.rows.clear();
    }
    a->sort_parts();
    a->seq = next_seq++;
    heap.push(a);
  }
  std::vector<std::vector<std::size_t>> out;
  out.reserve(k);
  for (Part& p : heap.top()->parts) {
    std::vector<std::size_t> rows;
    for (std::size_t r : p.rows) {
      if (r < tokens.size()) rows.push_back(r);
    }
    std::sort(rows.begin(), rows.end());
    out.push_back(std::move(rows));
  }
  return out;
}

DpImbalance verl_dp_imbalance(const std::vector<std::int64_t>& tokens, const DpLayout& layout, double work_per_token,
                              double work_per_pair) {
  DpImbalance out;
  if (tokens.empty()) return out;
  if (layout.partitions < 1 || layout.group_gpus < 1 || layout.partitions % layout.group_gpus != 0 || layout.update_calls < 1 ||
      layout.mini_batches < 1) {
    throw std::invalid_argument("verl_dp_imbalance: partitions must be a multiple of the group size, and every count positive");
  }
  const auto work = [&](std::int64_t l) {
    const auto len = static_cast<double>(l);
    return work_per_token * len + work_per_pair * len * (len + 1.0) / 2.0;
  };
  const auto k = static_cast<std::size_t>(layout.partitions);
  const auto gpus_per_group = static_cast<std::size_t>(layout.group_gpus);
  const std::size_t groups = k / gpus_per_group;
  const auto calls = static_cast<std::size_t>(layout.update_calls);
  // Mini-batches per call: verl's calls each hold a whole number of them.
  const std::size_t mini = std::max<std::size_t>(1, static_cast<std::size_t>(layout.mini_batches) / calls);
  double update_busiest = 0, update_mean = 0, forward_busiest = 0, forward_mean = 0;
  for (std::size_t c = 0; c < calls; ++c) {
    const std::size_t from = tokens.size() * c / calls, to = tokens.size() * (c + 1) / calls;
    if (from == to) continue;
    const std::vector<std::int64_t> call(tokens.begin() + static_cast<std::ptrdiff_t>(from), tokens.begin() + static_cast<std::ptrdiff_t>(to));
    const auto parts = balanced_partitions(call, k);
    // Each group's rows: its GPUs' partitions, one after another.
    std::vector<std::vector<std::size_t>> group_rows(groups);
    for (std::size_t p = 0; p < k; ++p) {
      auto& rows = group_rows[p / gpus_per_group];
      rows.insert(rows.end(), parts[p].begin(), parts[p].end());
    }
    std::vector<double> totals(groups, 0.0);
    for (std::size_t m = 0; m < mini; ++m) {
      double busiest = 0, sum = 0;
      for (std::size_t g = 0; g < groups; ++g) {
        const auto& rows = group_rows[g];
        double w = 0;
        for (std::size_t i = rows.size() * m / mini; i < rows.size() * (m + 1) / mini; ++i) w += work(call[rows[i]]);
        busiest = std::max(busiest, w);
        sum += w;
        totals[g] += w;
      }
      update_busiest += busiest;
      update_mean += sum / static_cast<double>(groups);
    }
    forward_busiest += *std::max_element(totals.begin(), totals.end());
    forward_mean += std::accumulate(totals.begin(), totals.end(), 0.0) / static_cast<double>(groups);
  }
  if (update_mean > 0) out.update = update_busiest / update_mean;
  if (forward_mean > 0) out.forward = forward_busiest / forward_mean;
  return out;
}

}  // namespace april::sim
