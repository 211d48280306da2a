#pragma once
// `april sweep` and `april tune` across processes, over MPI (Boost.MPI on
// OpenMPI; built only with APRIL_WITH_MPI). Rank 0 owns the results database:
// it decides what to run, hands each run to a worker rank as soon as that
// worker has a free slot (runs differ a lot in cost, so a static split would
// leave ranks idle), and stores each result in its own transaction as it
// arrives. Worker ranks only simulate, `jobs` runs at a time in threads.
//
// Faults: a finished run is in the database the moment rank 0 has stored it.
// A worker that dies takes only the runs it held; the MPI launcher then ends
// the job, and the next sweep of the same spec skips every stored run and
// re-runs those. If rank 0 dies, the launcher ends the job the same way: the
// database holds every run stored before, never a half-written one (each run
// is one transaction), and the runs in flight are re-run next time.
#include <cstdint>
#include <memory>

#include "base/config.hpp"
#include "studies/mpi_launch.hpp"
#include "studies/run_batch.hpp"

namespace april::studies {

class MpiSession {
 public:
  // Initialises MPI when this process was started by an MPI launcher
  // (mpirun, mpiexec, srun) and returns the session; null otherwise, so that
  // a plain `april sweep` never touches MPI.
  static std::unique_ptr<MpiSession> join_if_launched();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  [[nodiscard]] int rank() const;
  [[nodiscard]] int size() const;

  // Rank 0: an executor that runs each batch on the other ranks, `jobs`
  // runs at a time on each. Destroying it tells the workers to stop, so a
  // rank 0 that fails early never leaves them waiting.
  std::unique_ptr<RunExecutor> coordinator(std::int64_t jobs_per_worker);
  // Any other rank: simulate what rank 0 sends, `jobs` runs at a time, until
  // it says stop.
  void serve(const RunContext& context, const base::ConfigSchema& schema, std::int64_t jobs);

 private:
  struct State;
  explicit MpiSession(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace april::studies
