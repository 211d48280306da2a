// The engine's waiting queue against std::deque, the container it replaced:
// the same admission order under any mix of submissions, put-backs at the
// front and admissions, so that preemption and KV-drop orders are unchanged.
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <vector>

#include "sim/waiting_queue.hpp"

namespace april::sim {
namespace {

std::vector<int> contents(const WaitingQueue<int>& q) {
  std::vector<int> out;
  q.for_each([&out](int v) { out.push_back(v); });
  return out;
}

TEST(WaitingQueue, PutBacksGoFirstLastPutBackFirst) {
  WaitingQueue<int> q;
  q.push_back(1);
  q.push_back(2);
  q.push_front(3);
  q.push_front(4);
  EXPECT_EQ(contents(q), (std::vector<int>{4, 3, 1, 2}));
  EXPECT_EQ(q.size(), 4U);
  EXPECT_EQ(q.front(), 4);
  q.pop_front();
  q.pop_front();
  EXPECT_EQ(q.front(), 1);
  q.push_front(5);
  EXPECT_EQ(contents(q), (std::vector<int>{5, 1, 2}));
  q.clear();
  EXPECT_TRUE(q.empty());
}

TEST(WaitingQueue, MatchesADequeUnderRandomOperations) {
  std::mt19937 rng(7);
  WaitingQueue<int> q;
  std::deque<int> ref;
  int next = 0;
  for (int i = 0; i < 20000; ++i) {
    const auto op = rng() % 3;
    if (op == 0) {
      q.push_back(next);
      ref.push_back(next++);
    } else if (op == 1) {
      q.push_front(next);
      ref.push_front(next++);
    } else if (!ref.empty()) {
      ASSERT_EQ(q.front(), ref.front());
      q.pop_front();
      ref.pop_front();
    }
    ASSERT_EQ(q.size(), ref.size());
    if (i % 997 == 0) {
      ASSERT_EQ(contents(q), std::vector<int>(ref.begin(), ref.end()));
    }
  }
  EXPECT_EQ(contents(q), std::vector<int>(ref.begin(), ref.end()));
}

}  // namespace
}  // namespace april::sim
