#pragma once
// One long-lived thread that runs jobs one after another: the trainer of an
// overlapped live run, and the profiler's side-by-side probe of it, so that
// both time a train step on the same kind of thread, one that has waited idle
// for its next job, with its per-thread settings made once. (A thread made
// per step waited as long to start, 37-46 ms beside a computing engine on the
// 2-core machine, and was joined after each step: the wait is the idle CPU's,
// not the thread's; studies::Profile's train latencies measure it.)
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

namespace april::live {

class WorkerThread {
 public:
  // `on_start` runs once on the new thread before any job (per-thread settings such as torch's thread count).
  explicit WorkerThread(std::function<void()> on_start = {});
  // Finishes the jobs already given, then joins.
  ~WorkerThread();
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  // Queues `job`; its result (or exception) comes back through the future.
  template <class F>
  std::future<std::invoke_result_t<F>> run(F job) {
    using R = std::invoke_result_t<F>;
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(job));
    auto result = task->get_future();
    enqueue([task] { (*task)(); });
    return result;
  }

 private:
  void enqueue(std::function<void()> job);
  void loop(const std::function<void()>& on_start);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace april::live
