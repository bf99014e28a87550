// Beyond one machine: when Open MPI's mpirun started this process, MPI says
// which rank it is and how many there are, and the ranks swap their TCP
// endpoints with MPI_Allgather. The collectives then run over the same
// sockets as in the forked case, so one binary spans hosts. MPI is also the
// reference the ring is timed against (--compare-mpi: MPI_Allreduce on the
// same buffers). MPI support is optional at build time (RING_HAVE_MPI).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ring_allreduce/launcher.hpp"

namespace ring {

// True when this build has MPI.
bool mpi_built();
// True when the environment says an MPI launcher started us (Open MPI's
// OMPI_COMM_WORLD_SIZE, or PMI_SIZE from MPICH/Slurm). Does not need MPI.
bool launched_by_mpirun();

// MPI_Init/MPI_Finalize for the program's lifetime (no-op objects without MPI).
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int world() const { return world_; }
  [[nodiscard]] std::string library() const;  // "Open MPI v4.1.4, ..."

 private:
  int rank_ = 0;
  int world_ = 1;
};

// Runs `job` on every MPI rank: listen on `listen_addr`:0, exchange endpoints
// through MPI, connect the mesh (shared memory with the ranks on this host,
// per `transport`), run, gather the reports to rank 0. Rank 0
// gets every rank's outcome; the other ranks get an empty vector.
std::vector<RankOutcome> launch_mpi(const MpiSession& mpi, const std::string& listen_addr,
                                    std::chrono::milliseconds timeout, const TransportOptions& transport,
                                    const RankJob& job);

// MPI_Allreduce(MPI_IN_PLACE, ..., MPI_SUM, MPI_COMM_WORLD); throws without MPI.
void mpi_allreduce_inplace(std::span<double> data);
void mpi_allreduce_inplace(std::span<float> data);

}  // namespace ring
