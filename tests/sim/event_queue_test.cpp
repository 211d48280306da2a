#include <gtest/gtest.h>

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

}  // namespace
}  // namespace april::sim
