#include "adapters/live/detail/worker_thread.hpp"

#include <utility>

namespace april::live {

WorkerThread::WorkerThread(std::function<void()> on_start) : thread_([this, start = std::move(on_start)] { loop(start); }) {}

WorkerThread::~WorkerThread() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void WorkerThread::enqueue(std::function<void()> job) {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void WorkerThread::loop(const std::function<void()>& on_start) {
  if (on_start) on_start();
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // A notify wakes it at once; the slices only keep its CPU from halting.
      while (!stop_ && jobs_.empty()) cv_.wait_for(lock, kWaitSlice);
      if (jobs_.empty()) return;  // stopping, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();  // a packaged task: its exception goes to its future
  }
}

}  // namespace april::live
