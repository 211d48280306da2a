#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sim/simulator.hpp"

namespace april::sim {
namespace {

TEST(EventQueue, OrdersByTimeThenSchedulingOrder) {
  Simulator sim;
  std::vector<int> order;
  sim.schedule_at(TimeNs(20), 0, [&] { order.push_back(3); });
  sim.schedule_at(TimeNs(10), 0, [&] { order.push_back(1); });
  sim.schedule_at(TimeNs(10), 0, [&] { order.push_back(2); });  // same time: FIFO
  sim.schedule_at(TimeNs(5), 0, [&] { order.push_back(0); });
  while (sim.step()) {
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sim.now(), TimeNs(20));
}

TEST(EventQueue, CancelledEventsDoNotRun) {
  Simulator sim;
  int ran = 0;
  sim.schedule_at(TimeNs(1), 0, [&] { ran += 1; });
  const EventId id = sim.schedule_at(TimeNs(2), 0, [&] { ran += 10; });
  sim.schedule_at(TimeNs(3), 0, [&] { ran += 100; });
  sim.cancel(id);
  while (sim.step()) {
  }
  EXPECT_EQ(ran, 101);
  EXPECT_EQ(sim.events_run(), 2U);
}

// A handle outlives its event: once the event has run (or been dropped) its
// slot holds another, which the old handle must not cancel.
TEST(EventQueue, AStaleHandleCancelsNothing) {
  Simulator sim;
  int ran = 0;
  const EventId first = sim.schedule_at(TimeNs(1), 0, [&] { ran += 1; });
  ASSERT_TRUE(sim.step());
  const EventId second = sim.schedule_at(TimeNs(2), 0, [&] { ran += 10; });  // reuses the first's slot
  EXPECT_EQ(second.slot, first.slot);
  sim.cancel(first);
  const EventId third = sim.schedule_at(TimeNs(3), 0, [&] { ran += 100; });
  sim.cancel(third);
  sim.cancel(third);  // twice: once
  const EventId unset;
  sim.cancel(unset);  // a handle never given out
  while (sim.step()) {
  }
  EXPECT_EQ(ran, 11);
  EXPECT_EQ(sim.events_run(), 2U);
}

TEST(EventQueue, EventsScheduledFromEventsAtTheSameTimeRunAfter) {
  Simulator sim;
  std::vector<int> order;
  sim.schedule_at(TimeNs(1), 0, [&] {
    order.push_back(1);
    sim.schedule_in(TimeNs(0), 0, [&] { order.push_back(3); });
  });
  sim.schedule_at(TimeNs(1), 0, [&] { order.push_back(2); });
  sim.run_until(TimeNs(1));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(EventQueue, TimeNeverGoesBackwards) {
  Simulator sim;
  sim.schedule_at(TimeNs(10), 0, [] {});
  sim.step();
  EXPECT_THROW(sim.schedule_at(TimeNs(9), 0, [] {}), std::logic_error);
  EXPECT_THROW(sim.advance_to(TimeNs(5)), std::logic_error);
  sim.schedule_at(TimeNs(15), 0, [] {});
  EXPECT_THROW(sim.advance_to(TimeNs(20)), std::logic_error);  // would skip a pending event
}

TEST(EventQueue, TwoSimulatorsAreIndependent) {
  Simulator a, b;
  int na = 0, nb = 0;
  a.schedule_at(TimeNs(5), 1, [&] { ++na; });
  b.schedule_at(TimeNs(7), 2, [&] { ++nb; });
  a.run_until(TimeNs(100));
  EXPECT_EQ(na, 1);
  EXPECT_EQ(nb, 0);
  EXPECT_EQ(b.now(), TimeNs(0));
  EXPECT_NE(a.fingerprint(), b.fingerprint());
}

TEST(EventQueue, FingerprintDependsOnTheEventSequence) {
  auto run = [](std::int64_t t1, std::int64_t t2) {
    Simulator s;
    s.schedule_at(TimeNs(t1), 1, [] {});
    s.schedule_at(TimeNs(t2), 2, [] {});
    s.run_until(TimeNs(100));
    return s.fingerprint();
  };
  EXPECT_EQ(run(1, 2), run(1, 2));
  EXPECT_NE(run(1, 2), run(2, 1));  // same times, other tags order
  EXPECT_NE(run(1, 2), run(1, 3));
}

// The queue against a plain ordered set, over thousands of pushes, pops and
// cancels that grow it past several sizes of its tree: the same events run,
// in the same (time, scheduling) order.
TEST(EventQueue, RunsWhatAnOrderedSetWouldInItsOrder) {
  Simulator sim;
  std::set<std::pair<std::int64_t, std::uint64_t>> expected;  // (time, scheduling index)
  std::vector<std::pair<std::int64_t, std::uint64_t>> ran;
  std::vector<std::pair<EventId, std::pair<std::int64_t, std::uint64_t>>> handles;
  std::uint64_t x = 0x9E3779B97F4A7C15ULL, scheduled = 0;
  auto next = [&x] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  for (int round = 0; round < 20000; ++round) {
    const std::uint64_t r = next() % 100;
    if (r < 55 || expected.empty()) {
      // Few distinct times, so that ties are common.
      const std::int64_t t = sim.now().ns() + static_cast<std::int64_t>(next() % 50);
      const std::uint64_t idx = scheduled++;
      const EventId id = sim.schedule_at(TimeNs(t), 0, [&ran, t, idx] { ran.emplace_back(t, idx); });
      expected.emplace(t, idx);
      handles.push_back({id, {t, idx}});
    } else if (r < 90) {
      const auto first = *expected.begin();
      expected.erase(expected.begin());
      ASSERT_EQ(sim.next_event_time(), TimeNs(first.first));
      ASSERT_TRUE(sim.step());
      ASSERT_EQ(ran.back(), first);
    } else {
      // Cancel a random handle: pending, run or cancelled already.
      const auto& [id, what] = handles[next() % handles.size()];
      sim.cancel(id);
      expected.erase(what);
    }
  }
  while (!expected.empty()) {
    const auto first = *expected.begin();
    expected.erase(expected.begin());
    ASSERT_TRUE(sim.step());
    ASSERT_EQ(ran.back(), first);
  }
  EXPECT_FALSE(sim.step());
  EXPECT_FALSE(sim.has_pending());
}

}  // namespace
}  // namespace april::sim
