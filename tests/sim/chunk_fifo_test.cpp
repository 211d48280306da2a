// ChunkFifo against std::deque, the container it replaced in the engine's
// waiting queue: the same elements in the same order under any mix of pushes,
// pops and clears across chunk boundaries, every element destroyed exactly
// once, and a moved-from queue left empty and usable.
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>
#include <vector>

#include "sim/chunk_fifo.hpp"

namespace april::sim {
namespace {

// Counts live instances; a heap-owning member makes a leak or double free visible to ASan.
struct Counted {
  static inline int live = 0;
  std::string text;
  explicit Counted(int v) : text(std::to_string(v) + std::string(40, 'x')) { ++live; }
  Counted(const Counted& o) : text(o.text) { ++live; }
  Counted(Counted&& o) noexcept : text(std::move(o.text)) { ++live; }
  Counted& operator=(const Counted&) = default;
  Counted& operator=(Counted&&) noexcept = default;
  ~Counted() { --live; }
};

std::vector<std::string> contents(const ChunkFifo<Counted>& q) {
  std::vector<std::string> out;
  q.for_each([&out](const Counted& c) { out.push_back(c.text); });
  return out;
}

std::vector<std::string> contents(const std::deque<Counted>& q) {
  std::vector<std::string> out;
  for (const auto& c : q) out.push_back(c.text);
  return out;
}

TEST(ChunkFifo, MatchesADequeUnderRandomOperations) {
  Counted::live = 0;
  {
    std::mt19937 rng(5);
    ChunkFifo<Counted> q;
    std::deque<Counted> ref;
    int next = 0;
    for (int op = 0; op < 100000; ++op) {
      const auto r = rng() % 100;
      if (r < 52) {
        // Runs of pushes cross chunk boundaries (ChunkFifo<Counted>::kChunk elements each).
        const int n = 1 + static_cast<int>(rng() % (2 * ChunkFifo<Counted>::kChunk));
        for (int k = 0; k < n; ++k, ++next) {
          q.push_back(Counted(next));
          ref.emplace_back(next);
        }
      } else if (r < 99) {
        const int n = 1 + static_cast<int>(rng() % (2 * ChunkFifo<Counted>::kChunk));
        for (int k = 0; k < n && !ref.empty(); ++k) {
          ASSERT_EQ(q.front().text, ref.front().text) << "op " << op;
          q.pop_front();
          ref.pop_front();
        }
      } else {
        q.clear();
        ref.clear();
      }
      ASSERT_EQ(q.size(), ref.size());
      ASSERT_EQ(q.empty(), ref.empty());
      if (op % 997 == 0) {
        ASSERT_EQ(contents(q), contents(ref)) << "op " << op;
      }
    }
    EXPECT_EQ(Counted::live, static_cast<int>(2 * ref.size()));
  }
  EXPECT_EQ(Counted::live, 0);
}

TEST(ChunkFifo, AMovedFromQueueIsEmptyAndUsable) {
  Counted::live = 0;
  {
    ChunkFifo<Counted> a;
    for (int i = 0; i < 50; ++i) a.push_back(Counted(i));
    ChunkFifo<Counted> b(std::move(a));
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from queue is specified empty
    EXPECT_EQ(b.size(), 50U);
    EXPECT_EQ(b.front().text, Counted(0).text);
    a.push_back(Counted(7));
    EXPECT_EQ(a.front().text, Counted(7).text);
    a = std::move(b);
    EXPECT_EQ(a.size(), 50U);
    EXPECT_EQ(Counted::live, 50);
  }
  EXPECT_EQ(Counted::live, 0);
}

}  // namespace
}  // namespace april::sim
