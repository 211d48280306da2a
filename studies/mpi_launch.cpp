#include <cstdlib>
#include <initializer_list>

#include "studies/mpi_launch.hpp"

namespace april::studies {

bool launched_by_mpi() {
  // OpenMPI's mpirun, MPICH's hydra and Slurm's srun (PMI-2 or PMIx) each
  // give their ranks one of these; a plain shell gives none.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace april::studies
