// The trainer's thread of an overlapped live run (adapters/live/detail/worker_thread.hpp).
#include "adapters/live/detail/worker_thread.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace april::live {
namespace {

// Every job runs on the one thread, after its start-up, in the order given,
// never on the caller's.
TEST(WorkerThread, RunsJobsInOrderOnOneThreadAfterItsStartUp) {
  std::thread::id started_on;
  std::vector<int> order;
  std::vector<std::thread::id> ran_on;
  {
    WorkerThread w([&] { started_on = std::this_thread::get_id(); });
    std::vector<std::future<int>> results;
    for (int i = 0; i < 5; ++i) {
      results.push_back(w.run([&, i] {
        order.push_back(i);
        ran_on.push_back(std::this_thread::get_id());
        return i * i;
      }));
    }
    for (int i = 0; i < 5; ++i) EXPECT_EQ(results[static_cast<std::size_t>(i)].get(), i * i);
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  for (const auto& id : ran_on) {
    EXPECT_EQ(id, started_on);
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

// A job's exception reaches its caller through the future, and the thread goes on.
TEST(WorkerThread, AJobsErrorComesBackThroughItsFuture) {
  WorkerThread w;
  auto bad = w.run([]() -> int { throw std::runtime_error("trainer failed"); });
  EXPECT_THROW(
      {
        try {
          (void)bad.get();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "trainer failed");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ(w.run([] { return 7; }).get(), 7);
}

// Destroyed with jobs queued, it runs them all before it joins: a train step
// given is never dropped.
TEST(WorkerThread, FinishesTheJobsGivenBeforeItGoes) {
  std::atomic<int> done{0};
  {
    WorkerThread w;
    for (int i = 0; i < 4; ++i) {
      (void)w.run([&done] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        return ++done;
      });
    }
  }
  EXPECT_EQ(done.load(), 4);
}

}  // namespace
}  // namespace april::live
