#include "sim/dp_balance.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <queue>
#include <stdexcept>

namespace april::sim {

namespace {

// One partition being built: its token sum and its rows, a chain through
// `Rows::next` in the order they joined (merging two is O(1): verl's lists
// are concatenated, and with n / k states of k parts, copying them made
// most of a simulated step's balancing cost).
struct Part {
  std::int64_t sum = 0;
  std::uint32_t count = 0;
  std::uint32_t head = 0, tail = 0;
};

struct Rows {
  std::vector<std::uint32_t> next;  // the row after each in its partition's chain
  // verl's Set order: by sum, then by count, then by the rows themselves.
  [[nodiscard]] bool less(const Part& a, const Part& b) const {
    if (a.sum != b.sum) return a.sum < b.sum;
    if (a.count != b.count) return a.count < b.count;
    std::uint32_t x = a.head, y = b.head;
    for (std::uint32_t i = 0; i < a.count; ++i, x = next[x], y = next[y]) {
      if (x != y) return x < y;
    }
    return false;
  }
};

// k partitions, kept in decreasing order (verl's State): parts[off, off + k).
struct State {
  std::size_t off = 0;
  std::uint64_t seq = 0;  // creation order: our tie-break where verl's heap has none of its own
};

}  // namespace

std::vector<std::vector<std::size_t>> balanced_partitions(const std::vector<std::int64_t>& tokens, std::size_t k) {
  if (k == 0) throw std::invalid_argument("balanced_partitions: no partitions");
  // Rows beyond the input are empty padding (0 tokens) so that k divides the count.
  const std::size_t n = (tokens.size() + k - 1) / k * k;
  if (n > std::numeric_limits<std::uint32_t>::max()) throw std::invalid_argument("balanced_partitions: too many rows");
  // Rows sorted by (tokens, index). Token counts below 2^31 sort by a stable
  // radix sort on the count, 11 bits a pass, from the rows in index order:
  // a few linear passes where a comparison sort was a sixth of a step.
  std::vector<std::pair<std::int64_t, std::size_t>> sorted;
  sorted.reserve(n);
  const auto key = [&](std::size_t i) { return i < tokens.size() ? tokens[i] : 0; };
  const bool small = std::all_of(tokens.begin(), tokens.end(), [](std::int64_t t) { return t >= 0 && t < (std::int64_t{1} << 31); });
  if (small) {
    // Each row as one word, count above index: the passes read it in place
    // (gathering the counts by index was most of the sort).
    std::vector<std::uint64_t> order(n), next(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = (static_cast<std::uint64_t>(key(i)) << 32) | i;
    const std::int64_t largest = tokens.empty() ? 0 : *std::max_element(tokens.begin(), tokens.end());
    constexpr int kBits = 11;
    constexpr std::size_t kBuckets = std::size_t{1} << kBits;
    for (int shift = 32; shift < 63 && (largest >> (shift - 32)) > 0; shift += kBits) {
      std::array<std::size_t, kBuckets + 1> at{};
      for (const auto w : order) ++at[((w >> shift) & (kBuckets - 1)) + 1];
      for (std::size_t b = 1; b <= kBuckets; ++b) at[b] += at[b - 1];
      for (const auto w : order) next[at[(w >> shift) & (kBuckets - 1)]++] = w;
      order.swap(next);
    }
    for (const auto w : order) sorted.emplace_back(static_cast<std::int64_t>(w >> 32), static_cast<std::size_t>(w & 0xffffffffU));
  } else {
    for (std::size_t i = 0; i < n; ++i) sorted.emplace_back(i < tokens.size() ? tokens[i] : 0, i);
    std::sort(sorted.begin(), sorted.end());
  }
  Rows rows;
  rows.next.assign(n, 0);
  std::vector<Part> parts(n);
  const auto sort_parts = [&](const State& st) {
    std::sort(parts.begin() + static_cast<std::ptrdiff_t>(st.off), parts.begin() + static_cast<std::ptrdiff_t>(st.off + k),
              [&](const Part& a, const Part& b) { return rows.less(b, a); });
  };
  const auto first = [&](const State* st) -> const Part& { return parts[st->off]; };
  const auto spread = [&](const State* st) { return parts[st->off].sum - parts[st->off + k - 1].sum; };
  // The state popped first: the largest spread, then the largest first part.
  const auto pops_later = [&](const State* a, const State* b) {
    if (spread(a) != spread(b)) return spread(a) < spread(b);
    if (rows.less(first(a), first(b)) || rows.less(first(b), first(a))) return rows.less(first(a), first(b));
    return a->seq > b->seq;
  };
  // Each k consecutive rows of the sorted list start as one state, one row per partition.
  std::vector<State> states(n / k);
  std::priority_queue<State*, std::vector<State*>, decltype(pops_later)> heap(pops_later);
  for (std::size_t s = 0; s < states.size(); ++s) {
    State& st = states[s];
    st.seq = s;
    st.off = s * k;
    for (std::size_t i = 0; i < k; ++i) {
      const auto row = static_cast<std::uint32_t>(sorted[s * k + i].second);
      parts[s * k + i] = Part{sorted[s * k + i].first, 1, row, row};
    }
    // One row each, in ascending (tokens, index) order, which is Rows::less's
    // order for single rows: reversed, the order sort_parts would give.
    std::reverse(parts.begin() + static_cast<std::ptrdiff_t>(st.off), parts.begin() + static_cast<std::ptrdiff_t>(st.off + k));
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
      Part& into = parts[a->off + i];
      const Part& from = parts[b->off + k - 1 - i];
      into.sum += from.sum;
      into.count += from.count;
      rows.next[into.tail] = from.head;
      into.tail = from.tail;
    }
    sort_parts(*a);
    a->seq = next_seq++;
    heap.push(a);
  }
  // Each row's partition, then the rows in index order into theirs: each
  // partition's rows ascending, in one pass where sorting each was a fifth
  // of the balancing.
  std::vector<std::vector<std::size_t>> out(k);
  std::vector<std::uint32_t> part_of(tokens.size());
  const State* last = heap.top();
  for (std::size_t p = 0; p < k; ++p) {
    const Part& part = parts[last->off + p];
    std::size_t real = 0;
    std::uint32_t r = part.head;
    for (std::uint32_t i = 0; i < part.count; ++i, r = rows.next[r]) {
      if (r < tokens.size()) {
        part_of[r] = static_cast<std::uint32_t>(p);
        ++real;
      }
    }
    out[p].reserve(real);
  }
  for (std::size_t r = 0; r < tokens.size(); ++r) out[part_of[r]].push_back(r);
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
    const std::vector<std::int64_t> call(tokens.begin() + static_cast<std::ptrdiff_t>(from),
                                         tokens.begin() + static_cast<std::ptrdiff_t>(to));
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
