// xstage bench layer: which rank this process is and which GPU it drives, read from the launcher's environment
// (OpenMPI, MPICH/Intel MPI PMI, Slurm) or laid out for one process driving all local GPUs. Plain C++.
// Used at xstage-bench's start-up (bench/rank_launch.hpp); no MPI/NCCL code here.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace xs::bench {

struct RankContext {
  int rank = 0;        // global rank in [0, world_size)
  int world_size = 1;  // number of ranks in the run
  int local_rank = 0;  // rank among the ranks on this node, in [0, local_size)
  int local_size = 1;  // number of ranks on this node
  int device = 0;      // CUDA device index this rank drives (= local_rank)
  std::string launcher = "single";  // "single", "mpi", "slurm", "all-gpus-one-process"
};

// Reads, in this order (the first launcher whose rank variable is set wins; mpirun under srun sets both):
//   OpenMPI:   OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE              -> launcher "mpi"
//   PMI:       PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS (MPICH hydra, Intel MPI) -> "mpi"
//   Slurm:     SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, and the tasks on this node from
//              SLURM_NTASKS_PER_NODE or a uniform SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE ("4(x2)") -> "slurm"
//   none:      one process, rank 0 of 1, device 0 -> "single"
// device = local_rank. Throws input_error (exit 2) naming the variable for a non-integer, a missing companion
// variable, rank >= size, local size > world size, or more ranks on this node than `num_local_gpus`
// (checked on every rank against the local size too, so all ranks of a node fail alike instead of some
// waiting at bootstrap); no_gpu_error (exit 77) when num_local_gpus < 1.
// Caveat: a plain `sbatch` script (no srun) also has SLURM_PROCID=0 and SLURM_NTASKS; launch with srun.
// num_local_gpus nullopt (a dry run: no device is touched) skips both GPU checks.
RankContext rank_context_from_env(const std::map<std::string, std::string>& env, std::optional<int> num_local_gpus);

// True when a launcher's rank variable (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID) is set.
bool launched_by_launcher(const std::map<std::string, std::string>& env);

// With several ranks a point's P (the ranks its work is split over) must be the run's number of ranks; with
// one rank P is emulated on one GPU and any P is accepted. input_error naming `field` otherwise.
void check_world_matches_p(int num_ranks, long long requested_p, const std::string& field);

// The ncclCommInitAll launch model: one process, one thread per GPU, rank i drives device i.
// requested 0 = all `num_gpus`; requested > num_gpus or < 0 -> input_error (field "--gpus");
// num_gpus < 1 -> no_gpu_error.
std::vector<RankContext> all_gpus_one_process(int num_gpus, int requested);

// Ulysses sequence parallelism over P = num_ranks: each rank owns H/P whole heads and M/P sequence rows, so P
// must divide both. Throws input_error naming "P", "heads" or "M" with the accepted values.
void validate_ulysses_partition(int num_heads_total, int num_ranks, int seq_len);

}  // namespace xs::bench
