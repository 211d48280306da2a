#pragma once
// One long-lived thread that runs jobs one after another: a live run's
// trainer (every train step, overlapped or not) and the profiler's train
// probes, so that both time a train step on the same kind of thread, with
// its per-thread settings made once.
//
// Neither side of a handoff sleeps for long. On the 2-core VM this runs on, a
// thread blocked for seconds lets its virtual CPU halt, and waking that CPU
// took the host 10-70 ms: a train step handed to a trainer idle since its
// last one started 11-73 ms late, and a loop blocked on a train step saw its
// end 11-21 ms late, where a thread that woke every millisecond was woken in
// 0.2-0.5 ms (april profile's train latencies, 2026-11-23). A live trainer
// and engine on their own devices have no such wait, so both sides wait in
// slices of kWaitSlice: the job queue here, and wait_in_slices for results.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

namespace april::live {

// How long a waiting thread sleeps before it looks again.
inline constexpr std::chrono::milliseconds kWaitSlice{1};

// Waits until `f` is ready, waking every kWaitSlice (see above).
template <class T>
void wait_in_slices(const std::future<T>& f) {
  while (f.wait_for(kWaitSlice) != std::future_status::ready) {
  }
}

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
