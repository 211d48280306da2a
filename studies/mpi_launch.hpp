#pragma once
// Whether an MPI launcher started this process. Part of every build, so that
// an april built without MPI can refuse `mpirun -n 3 april sweep` instead of
// running the whole sweep three times.
namespace april::studies {

// True where the environment carries an MPI launcher's rank variables.
bool launched_by_mpi();

}  // namespace april::studies
