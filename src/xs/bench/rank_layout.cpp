// xstage bench layer: launcher environment -> RankContext, the all-GPUs-one-process layout and the Ulysses
// partition check (see rank_layout.hpp).
#include "xs/bench/rank_layout.hpp"

#include <charconv>
#include <optional>

#include "xs/common/error.hpp"

namespace xs::bench {
namespace {

using Env = std::map<std::string, std::string>;

std::optional<std::string> lookup(const Env& env, const std::string& name) {
  const auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  return it->second;
}

int parse_non_negative(const std::string& name, const std::string& text) {
  int value = -1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) {
    throw input_error(name, "\"" + text + "\" is not a non-negative integer (set by the launcher: mpirun or srun)");
  }
  return value;
}

int require_int(const Env& env, const std::string& name, const std::string& because) {
  const auto text = lookup(env, name);
  if (!text) throw input_error(name, "not set, but " + because + " is; the launcher sets both");
  return parse_non_negative(name, *text);
}

std::optional<int> optional_int(const Env& env, const std::string& name) {
  const auto text = lookup(env, name);
  if (!text) return std::nullopt;
  return parse_non_negative(name, *text);
}

// Slurm's compressed per-node task list, e.g. "4(x2)" or "4": the count when every node has the same number of
// tasks, else nullopt (then SLURM_NTASKS_PER_NODE is needed: which entry is this node is not recorded reliably).
std::optional<int> uniform_tasks_per_node(const std::string& name, const std::string& text) {
  if (text.find(',') != std::string::npos) return std::nullopt;
  const auto paren = text.find('(');
  const std::string count = text.substr(0, paren);
  if (paren != std::string::npos && (text.size() < paren + 4 || text.compare(paren, 2, "(x") != 0 || text.back() != ')')) {
    throw input_error(name, "\"" + text + "\" is not a Slurm task list such as 4 or 4(x2)");
  }
  return parse_non_negative(name, count);
}

void check_context(const RankContext& c, const std::string& rank_var, const std::string& size_var,
                   const std::string& local_rank_var, const std::string& local_size_var,
                   std::optional<int> local_gpus) {
  if (c.world_size < 1) throw input_error(size_var, "must be at least 1, got " + std::to_string(c.world_size));
  if (c.rank >= c.world_size) {
    throw input_error(rank_var, "rank " + std::to_string(c.rank) + " is not below the world size " +
                                    std::to_string(c.world_size) + " (" + size_var + ")");
  }
  if (c.local_size < 1) throw input_error(local_size_var, "must be at least 1, got " + std::to_string(c.local_size));
  if (c.local_size > c.world_size) {
    throw input_error(local_size_var, "inconsistent sizes: " + std::to_string(c.local_size) +
                                          " ranks on this node but " + std::to_string(c.world_size) +
                                          " in the run (" + size_var + ")");
  }
  if (c.local_rank >= c.local_size) {
    throw input_error(local_rank_var, "inconsistent sizes: local rank " + std::to_string(c.local_rank) +
                                          " is not below the local size " + std::to_string(c.local_size) + " (" +
                                          local_size_var + ")");
  }
  if (!local_gpus) return;  // a dry run touches no device
  const int num_local_gpus = *local_gpus;
  const std::string gpus = std::to_string(num_local_gpus) + " GPU" + (num_local_gpus == 1 ? "" : "s");
  if (c.local_rank >= num_local_gpus) {
    throw input_error(local_rank_var, "more ranks on this node than GPUs: local rank " + std::to_string(c.local_rank) +
                                          ", " + gpus + "; launch at most one rank per GPU");
  }
  if (c.local_size > num_local_gpus) {
    throw input_error(local_size_var, "more ranks on this node than GPUs: " + std::to_string(c.local_size) +
                                          " ranks on this node, " + gpus + "; launch at most one rank per GPU");
  }
}

}  // namespace

bool launched_by_launcher(const Env& env) {
  return lookup(env, "OMPI_COMM_WORLD_RANK") || lookup(env, "PMI_RANK") || lookup(env, "SLURM_PROCID");
}

void check_world_matches_p(int num_ranks, long long requested_p, const std::string& field) {
  if (num_ranks <= 1 || requested_p == num_ranks) return;
  throw input_error(field, "P=" + std::to_string(requested_p) + " but the run has " + std::to_string(num_ranks) +
                               " ranks: with several ranks P is the number of ranks (mpirun -np P, or --gpus P); "
                               "with one rank P ranks are emulated on one GPU");
}

RankContext rank_context_from_env(const Env& env, std::optional<int> num_local_gpus) {
  if (num_local_gpus && *num_local_gpus < 1) throw no_gpu_error("no GPU on this node: a rank needs one GPU to drive");
  RankContext c;
  if (lookup(env, "OMPI_COMM_WORLD_RANK")) {
    const std::string r = "OMPI_COMM_WORLD_RANK", s = "OMPI_COMM_WORLD_SIZE";
    const std::string lr = "OMPI_COMM_WORLD_LOCAL_RANK", ls = "OMPI_COMM_WORLD_LOCAL_SIZE";
    c.rank = parse_non_negative(r, *lookup(env, r));
    c.world_size = require_int(env, s, r);
    c.local_rank = require_int(env, lr, r);
    c.local_size = require_int(env, ls, r);
    c.launcher = "mpi";
    check_context(c, r, s, lr, ls, num_local_gpus);
  } else if (lookup(env, "PMI_RANK")) {
    const std::string r = "PMI_RANK", s = "PMI_SIZE", lr = "MPI_LOCALRANKID", ls = "MPI_LOCALNRANKS";
    c.rank = parse_non_negative(r, *lookup(env, r));
    c.world_size = require_int(env, s, r);
    // One rank needs no local ids; with more, guessing local = global would be wrong on several nodes.
    c.local_rank = c.world_size == 1 ? optional_int(env, lr).value_or(0) : require_int(env, lr, r);
    c.local_size = c.world_size == 1 ? optional_int(env, ls).value_or(1) : require_int(env, ls, r);
    c.launcher = "mpi";
    check_context(c, r, s, lr, ls, num_local_gpus);
  } else if (lookup(env, "SLURM_PROCID")) {
    const std::string r = "SLURM_PROCID", s = "SLURM_NTASKS", lr = "SLURM_LOCALID";
    c.rank = parse_non_negative(r, *lookup(env, r));
    c.world_size = require_int(env, s, r);
    c.local_rank = require_int(env, lr, r);
    std::string ls = "SLURM_NTASKS_PER_NODE";
    if (const auto n = optional_int(env, ls)) {
      c.local_size = *n;
    } else {
      std::optional<int> uniform;
      for (const std::string name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
        if (const auto text = lookup(env, name)) {
          ls = name;
          uniform = uniform_tasks_per_node(name, *text);
          if (!uniform) {
            throw input_error(name, "\"" + *text + "\": nodes run different numbers of tasks; launch with "
                                    "srun --ntasks-per-node=N so SLURM_NTASKS_PER_NODE says this node's count");
          }
          break;
        }
      }
      if (!uniform) {
        throw input_error("SLURM_NTASKS_PER_NODE", "not set (nor SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE) "
                                                   "while SLURM_PROCID is; launch with srun --ntasks-per-node=N");
      }
      c.local_size = *uniform;
    }
    c.launcher = "slurm";
    check_context(c, r, s, lr, ls, num_local_gpus);
  }
  c.device = c.local_rank;
  return c;
}

std::vector<RankContext> all_gpus_one_process(int num_gpus, int requested) {
  if (num_gpus < 1) throw no_gpu_error("no GPU on this node: the all-GPUs launch model needs at least one");
  if (requested < 0 || requested > num_gpus) {
    throw input_error("--gpus", std::to_string(requested) + " requested, " + std::to_string(num_gpus) +
                                  " on this node; accepted: 0 (all) to " + std::to_string(num_gpus));
  }
  const int n = requested == 0 ? num_gpus : requested;
  std::vector<RankContext> ranks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    ranks[static_cast<std::size_t>(i)] = RankContext{i, n, i, n, i, "all-gpus-one-process"};
  }
  return ranks;
}

namespace {
std::string divisors(int n) {
  std::string out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out += (out.empty() ? "" : ",") + std::to_string(d);
  }
  return out;
}
}  // namespace

void validate_ulysses_partition(int num_heads_total, int num_ranks, int seq_len) {
  if (num_ranks < 1) throw input_error("P", "must be at least 1 rank, got " + std::to_string(num_ranks));
  if (num_heads_total < 1) throw input_error("heads", "must be at least 1, got " + std::to_string(num_heads_total));
  if (seq_len < 1) throw input_error("M", "must be at least 1, got " + std::to_string(seq_len));
  const std::string p = std::to_string(num_ranks);
  if (num_heads_total % num_ranks != 0) {
    throw input_error("heads", "P=" + p + " ranks do not divide the " + std::to_string(num_heads_total) +
                                   " heads: Ulysses gives each rank H/P whole heads; P must be one of " +
                                   divisors(num_heads_total));
  }
  if (seq_len % num_ranks != 0) {
    throw input_error("M", "P=" + p + " ranks do not divide the sequence length M=" + std::to_string(seq_len) +
                               ": each rank holds M/P rows; M must be a multiple of " + p);
  }
}

}  // namespace xs::bench
