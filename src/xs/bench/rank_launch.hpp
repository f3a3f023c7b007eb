// xstage bench layer: the rank start-up and shut-down of xstage-bench and xstage-calibrate. Picks the launch model (one rank; ranks as
// threads of this process with --gpus; one process per GPU under mpirun/srun in an MPI build), validates it
// (exit 2 with the reason), runs the tool's body once per rank, and ends MPI cleanly or aborts a stuck run.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "xs/bench/rank_comm.hpp"
#include "xs/bench/rank_layout.hpp"

namespace xs::bench {

struct LaunchChoice {
  std::string model = "single";    // "single" | "threads" | "mpi"
  std::vector<RankContext> ranks;  // threads: one per thread; otherwise this process's own
};

// The launch model for this process. `gpus` is --gpus (1: one rank; N > 1: N ranks as threads; 0: all local
// GPUs as threads). count_local_gpus (throws no_gpu_error without one) is called only when `uses_gpus` (not
// for a dry run or the simulator; --gpus 0 then stands for an unknown count: one rank).
// input_error (exit 2): several launcher ranks in a build without MPI (says -DXS_WITH_MPI=ON), --gpus other
// than 1 under a launcher, more ranks on this node than GPUs (rank_layout's checks).
LaunchChoice choose_launch(const std::map<std::string, std::string>& env, int gpus, bool uses_gpus, bool mpi_built,
                           const std::function<int()>& count_local_gpus);

// The launcher variables of this process (those rank_context_from_env reads).
std::map<std::string, std::string> launcher_environment();

// One process's ranks for the lifetime of main().
class RankProcess {
 public:
  // Before the command line is parsed: starts MPI when a launcher started this process and the build has MPI.
  // On a rank other than 0 stdout goes to /dev/null for good and stderr until parsed() (the options are the
  // same on every rank: rank 0 prints their help and errors). `tool_name` prefixes finish()'s message.
  RankProcess(std::string tool_name, int* argc, char*** argv);
  ~RankProcess();
  RankProcess(const RankProcess&) = delete;
  RankProcess& operator=(const RankProcess&) = delete;
  void parsed();
  bool is_root() const { return root_; }

  // Chooses and checks the launch (agreed over MPI: one rank's refusal ends every rank), then runs
  // body(context, comm) once per rank: on this thread, or on one thread per GPU. Returns rank 0's code. An
  // error every rank agreed on is reported by rank 0 only; a rank's own error is rethrown as
  // "rank r: ..." (the caller prints it).
  int run(int gpus, bool uses_gpus, const std::function<int()>& count_local_gpus,
          const std::function<int(const RankContext&, RankComm&)>& body);

  // Ends the process's ranks with main's exit code: under MPI every rank meets at an exit barrier and
  // finalizes; when some rank does not come the run is aborted with `code` (MPI_Abort), after a message naming
  // this rank. The exit barrier waits at most exit_wait_s(): after this rank's own error (the others may be
  // stuck in a collective, or one hangs) min(30 s, XS_RANK_TIMEOUT_S), otherwise XS_RANK_TIMEOUT_S (the
  // others may still be finishing their last point). Returns the code to exit with.
  int finish(int code);
  double exit_wait_s() const;

 private:
  std::string tool_name_;
  struct Mpi;
  std::unique_ptr<Mpi> mpi_;
  bool root_ = true;
  bool own_error_ = false;  // a rank's own (not agreed) error escaped run()
  int saved_stderr_ = -1;
};

}  // namespace xs::bench
