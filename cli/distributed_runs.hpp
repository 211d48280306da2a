#pragma once
// How a process of `april sweep` or `april tune` takes part: alone (worker
// threads), or as one rank of an MPI job (studies/mpi_runs.hpp), where rank 0
// decides, stores and prints, and every other rank only simulates.
#include <cstdint>
#include <memory>

#include "base/config.hpp"
#include "studies/run_batch.hpp"

namespace april::studies {
class MpiSession;
}

namespace april::cli {

class DistributedRuns {
 public:
  // Joins the MPI job where an MPI launcher started this process; on rank 0
  // the workers are told to stop when this object goes, however the command
  // ends. Throws where the launcher started several ranks of an april built
  // without MPI (each would run the whole sweep).
  explicit DistributedRuns(std::int64_t jobs);
  ~DistributedRuns();
  DistributedRuns(const DistributedRuns&) = delete;
  DistributedRuns& operator=(const DistributedRuns&) = delete;

  [[nodiscard]] int ranks() const;  // 1 when not under MPI
  [[nodiscard]] bool is_worker() const;
  // A worker rank: simulate what rank 0 sends until it is done.
  void serve(const studies::RunContext& context, const base::ConfigSchema& schema);
  // Rank 0 of a job with workers: the executor that sends them runs; null
  // otherwise (run in this process's threads).
  [[nodiscard]] studies::RunExecutor* executor() const { return coordinator_.get(); }
  // One line on how the runs were spread, for the command's summary.
  [[nodiscard]] std::string describe(const studies::BatchProgress& last) const;

 private:
  std::int64_t jobs_;
  std::unique_ptr<studies::MpiSession> session_;
  std::unique_ptr<studies::RunExecutor> coordinator_;
};

}  // namespace april::cli
