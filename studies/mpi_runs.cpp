#include "studies/mpi_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/serialization/string.hpp>

#include "studies/run_wire.hpp"

namespace april::studies {
namespace mpi = boost::mpi;

namespace {

// Rank 0 -> worker: a run (wire spec) or stop (empty). Worker -> rank 0: a record.
constexpr int kTagRun = 1;
constexpr int kTagStop = 2;
constexpr int kTagRecord = 3;

// OpenMPI's blocking receive spins a core while it waits. Rank 0 and each
// worker's message thread wait far more than they work, and on a node where
// every core runs a worker that spinning would steal the workers' time; so
// they poll with a short sleep that grows while nothing arrives (50 us up to
// 2 ms: small next to any simulation).
class Backoff {
 public:
  void reset() { wait_ = std::chrono::microseconds(50); }
  void sleep() {
    std::this_thread::sleep_for(wait_);
    wait_ = std::min(wait_ * 2, std::chrono::microseconds(2000));
  }

 private:
  std::chrono::microseconds wait_{50};
};

class MpiCoordinator final : public RunExecutor {
 public:
  MpiCoordinator(mpi::communicator world, std::int64_t slots) : world_(std::move(world)), slots_(slots) {}
  ~MpiCoordinator() override {
    // Every worker waits for this; a rank 0 unwinding from an error must send it too.
    for (int w = 1; w < world_.size(); ++w) world_.send(w, kTagStop, std::string());
  }
  MpiCoordinator(const MpiCoordinator&) = delete;
  MpiCoordinator& operator=(const MpiCoordinator&) = delete;

  void execute(const std::vector<const RunSpec*>& todo, const RunContext& /*context*/, const Done& done) override {
    try {
      run(todo, done);
    } catch (const std::exception& e) {
      // Workers hold runs and may be sending them: no clean stop is possible.
      // Every run stored so far is committed; the next sweep re-runs the rest.
      fmt::print(stderr, "april: rank 0: {}; ending the MPI job (the database keeps every run stored so far)\n", e.what());
      std::fflush(stderr);
      world_.abort(1);
    }
  }

 private:
  void run(const std::vector<const RunSpec*>& todo, const Done& done) {
    std::size_t next = 0, outstanding = 0;
    auto hand_out = [&](int worker) {
      world_.send(worker, kTagRun, spec_to_wire(static_cast<std::int64_t>(next), *todo[next]));
      ++next;
      ++outstanding;
    };
    for (std::int64_t slot = 0; slot < slots_; ++slot) {
      for (int w = 1; w < world_.size() && next < todo.size(); ++w) hand_out(w);
    }
    Backoff backoff;
    while (outstanding > 0) {
      const auto st = world_.iprobe(mpi::any_source, kTagRecord);
      if (!st) {
        backoff.sleep();
        continue;
      }
      backoff.reset();
      std::string text;
      world_.recv(st->source(), kTagRecord, text);
      --outstanding;
      // The worker gets its next run before this one is stored: it never
      // waits on the database.
      if (next < todo.size()) hand_out(st->source());
      WireRecord w = record_from_wire(text);
      if (w.index < 0 || static_cast<std::size_t>(w.index) >= todo.size()) {
        throw std::runtime_error(fmt::format("rank {} returned run {}, which was never sent", st->source(), w.index));
      }
      done(static_cast<std::size_t>(w.index), std::move(w.record));
    }
  }

  mpi::communicator world_;
  std::int64_t slots_;
};

}  // namespace

struct MpiSession::State {
  // Not abort_on_exception: rank 0's errors are reported and end the job
  // where they happen (MpiCoordinator::execute, MpiSession::serve).
  mpi::environment env{mpi::threading::funneled, false};
  mpi::communicator world;
};

MpiSession::MpiSession(std::unique_ptr<State> state) : state_(std::move(state)) {}
MpiSession::~MpiSession() = default;

std::unique_ptr<MpiSession> MpiSession::join_if_launched() {
  if (!launched_by_mpi()) return nullptr;
  auto state = std::make_unique<State>();
  if (state->env.thread_level() < mpi::threading::funneled) {
    throw std::runtime_error("this MPI library cannot host threads (MPI_THREAD_FUNNELED); april sweep under MPI needs it");
  }
  return std::unique_ptr<MpiSession>(new MpiSession(std::move(state)));
}

int MpiSession::rank() const { return state_->world.rank(); }
int MpiSession::size() const { return state_->world.size(); }

std::unique_ptr<RunExecutor> MpiSession::coordinator(std::int64_t jobs_per_worker) {
  if (rank() != 0) throw std::logic_error("MpiSession::coordinator on a rank other than 0");
  return std::make_unique<MpiCoordinator>(state_->world, std::max<std::int64_t>(1, jobs_per_worker));
}

void MpiSession::serve(const RunContext& context, const base::ConfigSchema& schema, std::int64_t jobs) {
  const mpi::communicator& world = state_->world;
  std::mutex m;
  std::condition_variable work_ready;
  std::deque<WireSpec> runs;
  std::deque<std::string> records;
  bool stopping = false;
  auto simulate = [&] {
    for (;;) {
      std::unique_lock<std::mutex> lock(m);
      work_ready.wait(lock, [&] { return stopping || !runs.empty(); });
      if (stopping) return;
      WireSpec w = std::move(runs.front());
      runs.pop_front();
      lock.unlock();
      std::string text = record_to_wire(w.index, simulate_run(w.spec, context));
      lock.lock();
      records.push_back(std::move(text));
    }
  };
  std::vector<std::thread> threads;
  for (std::int64_t t = 0; t < std::max<std::int64_t>(1, jobs); ++t) threads.emplace_back(simulate);
  auto stop_threads = [&] {
    {
      std::lock_guard<std::mutex> lock(m);
      stopping = true;
      runs.clear();
    }
    work_ready.notify_all();
    for (auto& t : threads) t.join();
  };

  // This thread alone talks MPI (MPI_THREAD_FUNNELED): it sends finished
  // records and takes new runs; the threads above only simulate.
  try {
    Backoff backoff;
    for (;;) {
      std::deque<std::string> finished;
      {
        std::lock_guard<std::mutex> lock(m);
        finished.swap(records);
      }
      for (const auto& text : finished) world.send(0, kTagRecord, text);
      if (const auto st = world.iprobe(0, mpi::any_tag)) {
        std::string text;
        world.recv(0, st->tag(), text);
        if (st->tag() == kTagStop) break;
        WireSpec w = spec_from_wire(text, schema);
        {
          std::lock_guard<std::mutex> lock(m);
          runs.push_back(std::move(w));
        }
        work_ready.notify_one();
        backoff.reset();
        continue;
      }
      if (finished.empty()) {
        backoff.sleep();
      } else {
        backoff.reset();
      }
    }
  } catch (const std::exception& e) {
    // Rank 0 waits for this rank's runs: only ending the job frees it.
    fmt::print(stderr, "april: rank {}: {}; ending the MPI job\n", world.rank(), e.what());
    std::fflush(stderr);
    world.abort(1);
  }
  stop_threads();
}

}  // namespace april::studies
