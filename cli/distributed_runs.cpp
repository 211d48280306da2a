#include "cli/distributed_runs.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "studies/mpi_launch.hpp"
#if APRIL_WITH_MPI
#include "studies/mpi_runs.hpp"
#else
namespace april::studies {
// Never made in a build without MPI; complete here so the unique_ptr can delete it.
class MpiSession {};
}  // namespace april::studies
#endif

namespace april::cli {
#if !APRIL_WITH_MPI
namespace {

// The rank count an MPI launcher announced, or 1.
long announced_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    if (const char* v = std::getenv(name)) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end != v && n > 1) return n;
    }
  }
  return 1;
}

}  // namespace
#endif

DistributedRuns::DistributedRuns(std::int64_t jobs) : jobs_(jobs) {
#if APRIL_WITH_MPI
  session_ = studies::MpiSession::join_if_launched();
  if (session_ && session_->rank() == 0 && session_->size() > 1) coordinator_ = session_->coordinator(jobs_);
#else
  if (studies::launched_by_mpi() && announced_ranks() > 1) {
    throw std::runtime_error(
        fmt::format("started as one of {} MPI ranks, but this april was built without MPI (each rank would run the whole sweep); "
                    "install libboost-mpi-dev and openmpi-bin and rebuild, or run it without mpirun/srun",
                    announced_ranks()));
  }
#endif
}

DistributedRuns::~DistributedRuns() {
  coordinator_.reset();  // tells the workers to stop, before MPI is finalised
  session_.reset();
}

int DistributedRuns::ranks() const {
#if APRIL_WITH_MPI
  if (session_) return session_->size();
#endif
  return 1;
}

bool DistributedRuns::is_worker() const {
#if APRIL_WITH_MPI
  if (session_) return session_->rank() != 0;
#endif
  return false;
}

void DistributedRuns::serve(const studies::RunContext& context, const base::ConfigSchema& schema) {
#if APRIL_WITH_MPI
  if (session_ && session_->rank() != 0) {
    session_->serve(context, schema, jobs_);
    return;
  }
#endif
  (void)context;
  (void)schema;
  throw std::logic_error("DistributedRuns::serve on a process that is not an MPI worker");
}

std::string DistributedRuns::describe(const studies::BatchProgress& last) const {
  const std::int64_t stored = last.finished - last.skipped;
  const std::string rate = last.store_s > 0 && stored > 0
                               ? fmt::format("; rank 0 stored {} runs in {:.3f} s of writes ({:.0f} runs/s at most)", stored, last.store_s,
                                             static_cast<double>(stored) / last.store_s)
                               : "";
  if (ranks() > 1)
    return fmt::format("{} MPI ranks: rank 0 collects, {} simulate with {} thread{} each{}", ranks(), ranks() - 1, jobs_,
                       jobs_ == 1 ? "" : "s", rate);
  return fmt::format("one process, {} thread{}{}", jobs_, jobs_ == 1 ? "" : "s", rate);
}

}  // namespace april::cli
