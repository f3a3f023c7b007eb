// xstage bench layer: xstage-bench's rank start-up and shut-down (see rank_launch.hpp).
#include "xs/bench/rank_launch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>

#include "xs/bench/mpi_rank_comm.hpp"
#include "xs/bench/rank_agree.hpp"

namespace xs::bench {

std::map<std::string, std::string> launcher_environment() {
  std::map<std::string, std::string> env;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                           "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
                           "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE",
                           "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"})
    if (const char* value = std::getenv(name)) env[name] = value;
  return env;
}

LaunchChoice choose_launch(const std::map<std::string, std::string>& env, int gpus, bool uses_gpus, bool mpi_built,
                           const std::function<int()>& count_local_gpus) {
  if (gpus < 0) throw input_error("--gpus", fmt::format("{}: accepted 0 (all local GPUs) or a count >= 1", gpus));
  LaunchChoice choice;
  if (launched_by_launcher(env)) {
    const RankContext c = rank_context_from_env(env, uses_gpus ? std::optional<int>(count_local_gpus()) : std::nullopt);
    if (c.world_size > 1 && !mpi_built)
      throw input_error("mpirun", fmt::format("started as rank {} of {} ranks, but xstage was built without "
                                              "MPI: configure with -DXS_WITH_MPI=ON (and an MPI such as Debian's "
                                              "libopenmpi-dev), or run one process with --gpus N",
                                              c.rank, c.world_size));
    if (gpus != 1)
      throw input_error("--gpus", fmt::format("--gpus {} drives several GPUs from one process; under {} each process "
                                              "drives one GPU: drop --gpus, or run without the launcher",
                                              gpus, c.launcher == "slurm" ? "srun" : "mpirun"));
    choice.model = mpi_built ? "mpi" : "single";
    choice.ranks = {c};
    return choice;
  }
  if (gpus == 1) {
    choice.ranks = {RankContext{}};
    return choice;
  }
  choice.model = "threads";
  if (!uses_gpus) {  // no device is touched: N ranks as asked; 0 (all) is unknown: one rank
    if (gpus == 0) {
      choice.ranks = {RankContext{}};
      return choice;
    }
    for (int r = 0; r < gpus; ++r) choice.ranks.push_back(RankContext{r, gpus, r, gpus, r, "all-gpus-one-process"});
    return choice;
  }
  choice.ranks = all_gpus_one_process(count_local_gpus(), gpus);
  return choice;
}

struct RankProcess::Mpi {
#if defined(XS_HAVE_MPI)
  std::unique_ptr<MpiSession> session;
  std::unique_ptr<RankComm> comm;
#endif
  std::exception_ptr start_error;  // MPI start-up failed: reported by run(), inside the tool's error handling
};

RankProcess::RankProcess(std::string tool_name, int* argc, char*** argv)
    : tool_name_(std::move(tool_name)), mpi_(std::make_unique<Mpi>()) {
  const auto env = launcher_environment();
  if (launched_by_launcher(env)) {
    try {
#if defined(XS_HAVE_MPI)
      mpi_->session = std::make_unique<MpiSession>(argc, argv);
      mpi_->comm = mpi_->session->make_comm(rank_timeout_s_from_env());
      root_ = mpi_->comm->rank() == 0;
#else
      (void)argc;
      (void)argv;
      root_ = rank_context_from_env(env, std::nullopt).rank == 0;
#endif
    } catch (...) {
      mpi_->start_error = std::current_exception();
    }
  }
  if (!root_) {  // rank 0 prints help, parse errors and results; the others would only repeat them
    std::fflush(stdout);
    std::fflush(stderr);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDOUT_FILENO);
      saved_stderr_ = ::dup(STDERR_FILENO);
      ::dup2(null_fd, STDERR_FILENO);
      ::close(null_fd);
    }
  }
}

RankProcess::~RankProcess() = default;

void RankProcess::parsed() {
  if (saved_stderr_ < 0) return;
  std::fflush(stderr);
  ::dup2(saved_stderr_, STDERR_FILENO);
  ::close(saved_stderr_);
  saved_stderr_ = -1;
}

namespace {

// One rank's body. Several ranks: an agreed error is rank 0's to report (the others return its code quietly);
// a rank's own error is named by its rank.
int run_rank(const RankContext& context, RankComm& comm, bool& own_error,
             const std::function<int(const RankContext&, RankComm&)>& body) {
  try {
    return body(context, comm);
  } catch (const RankAgreedError& e) {
    if (comm.rank() != 0) return static_cast<int>(e.code());
    throw;
  } catch (const Error& e) {
    if (comm.size() == 1) throw;
    own_error = true;
    const std::string prefix = fmt::format("rank {}: ", comm.rank());  // a collective's error names it already
    const std::string message = e.what();
    throw Error(e.code(), e.domain(), e.field(), message.rfind(prefix, 0) == 0 ? message : prefix + message);
  } catch (const std::exception& e) {
    if (comm.size() == 1) throw;
    own_error = true;
    throw Error(ExitCode::kDeviceFailure, "runtime", "", fmt::format("rank {}: {}", comm.rank(), e.what()));
  }
}

}  // namespace

int RankProcess::run(int gpus, bool uses_gpus, const std::function<int()>& count_local_gpus,
                     const std::function<int(const RankContext&, RankComm&)>& body) {
  if (mpi_->start_error) std::rethrow_exception(mpi_->start_error);
  const auto env = launcher_environment();
#if defined(XS_HAVE_MPI)
  if (mpi_->comm) {
    RankComm& comm = *mpi_->comm;
    LaunchChoice choice;
    try {
      agree(comm, [&] {
        choice = choose_launch(env, gpus, uses_gpus, true, count_local_gpus);
        const RankContext& c = choice.ranks.front();
        if (c.rank != comm.rank() || c.world_size != comm.size())
          throw input_error(c.launcher == "slurm" ? "SLURM_PROCID" : "mpirun",
                            fmt::format("the launcher says rank {} of {}, MPI_COMM_WORLD has rank {} of {}: launch "
                                        "with mpirun or srun (a plain sbatch script sets SLURM_* without starting "
                                        "ranks)", c.rank, c.world_size, comm.rank(), comm.size()));
      });
    } catch (const RankAgreedError& e) {
      if (!root_) return static_cast<int>(e.code());
      throw;
    }
    return run_rank(choice.ranks.front(), comm, own_error_, body);
  }
#endif
  LaunchChoice choice;
  try {
    choice = choose_launch(env, gpus, uses_gpus, mpi_built(), count_local_gpus);
  } catch (const Error& e) {
    if (!root_) return static_cast<int>(e.code());  // the same refusal on every rank: rank 0 says it
    throw;
  }
  if (choice.ranks.size() == 1) {
    SingleRankComm one;
    return run_rank(choice.ranks.front(), one, own_error_, body);
  }
  bool own_error = false;
  const std::vector<int> codes = run_thread_ranks(
      static_cast<int>(choice.ranks.size()),
      [&](RankComm& comm) { return run_rank(choice.ranks[static_cast<std::size_t>(comm.rank())], comm, own_error, body); },
      rank_timeout_s_from_env());
  return codes.front();
}

double RankProcess::exit_wait_s() const {
  const double timeout_s = rank_timeout_s_from_env();
  return own_error_ ? std::min(30.0, timeout_s) : timeout_s;
}

int RankProcess::finish(int code) {
#if defined(XS_HAVE_MPI)
  if (mpi_->session) {
    const double wait_s = exit_wait_s();
    if (!mpi_->session->exit_barrier(wait_s)) {
      std::fprintf(stderr, "%s: rank %d: the other ranks did not finish within %.0f s after this rank's %s; "
                   "aborting every rank (MPI_Abort, exit %d)\n", tool_name_.c_str(),
                   mpi_->comm ? mpi_->comm->rank() : -1, wait_s, own_error_ ? "error" : "end",
                   code != 0 ? code : 3);
      std::fflush(stderr);
      mpi_->session->abort_all(code != 0 ? code : 3);
    }
    mpi_->comm.reset();
    mpi_->session.reset();  // MPI_Finalize
  }
#endif
  return code;
}

}  // namespace xs::bench
