// xstage bench layer: the one-process-per-GPU launch model under MPI (mpirun/srun): MPI start-up and shut-down
// and a RankComm over MPI_COMM_WORLD. Compiled only with XS_HAVE_MPI (-DXS_WITH_MPI=ON); no MPI header leaks.
#pragma once
#include <memory>

#include "xs/bench/rank_comm.hpp"

namespace xs::bench {

// True when this build has the MPI launch model (configured with -DXS_WITH_MPI=ON).
bool mpi_built();

#if defined(XS_HAVE_MPI)
// MPI_Init_thread(MPI_THREAD_FUNNELED: only the main thread calls MPI) for its lifetime; the destructor
// calls MPI_Finalize. One per process. input_error when MPI is already initialized.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  // Rank 0..size-1 over a duplicate of MPI_COMM_WORLD; collectives poll non-blocking MPI calls and throw
  // rank_comm_error after timeout_s (MPI has no timeout of its own).
  std::unique_ptr<RankComm> make_comm(double timeout_s);
  // Every rank arrives within timeout_s (a separate communicator, so it cannot match a collective another
  // rank is stuck in). False on timeout: some rank is stuck or gone; call abort_all.
  bool exit_barrier(double timeout_s);
  // MPI_Abort(MPI_COMM_WORLD, code): ends every rank (a rank stuck in a collective cannot end otherwise).
  [[noreturn]] void abort_all(int code);

 private:
  struct Impl;  // the exit communicator (an MPI type: kept out of this header)
  std::unique_ptr<Impl> impl_;
};
#endif

}  // namespace xs::bench
