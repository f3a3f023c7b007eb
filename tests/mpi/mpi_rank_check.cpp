// MPI check of bench/mpi_rank_comm and the rank-aware application loop (issue 14), run by CTest under
// `mpiexec -np 3` in a -DXS_WITH_MPI=ON build (a plain program: GoogleTest's output would repeat per rank).
// Checks barrier, gather of different sizes, broadcast of an ncclUniqueId-sized id, the agreement on one
// rank's error, then a 2-point fake suite: one seed per point on every rank, rank 0 alone writes, the merged
// times are per trial the slowest rank. Exit 0 when every check passed on every rank.
// With "stuck" after the folder: rank 1 gives up on its own while rank 0 waits in a barrier (600 s timeout);
// rank 1's exit barrier fails after 2 s and it ends the run with MPI_Abort(3): the run must end with code 3
// instead of hanging.
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "xs/bench/app_bench.hpp"
#include "xs/bench/mpi_rank_comm.hpp"
#include "xs/bench/rank_agree.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/result_file.hpp"

namespace {
using namespace xs::bench;
using nlohmann::json;

int g_failures = 0;
void check(bool ok, int rank, const std::string& what) {
  if (ok) return;
  ++g_failures;
  std::fprintf(stderr, "rank %d: FAILED %s\n", rank, what.c_str());
}

void check_collectives(RankComm& comm) {
  const int r = comm.rank(), n = comm.size();
  comm.barrier();
  const auto gathered = comm.gather_bytes_to_root(std::string(static_cast<std::size_t>(r) * 3, 'a' + r));
  if (r == 0) {
    check(gathered.size() == static_cast<std::size_t>(n), r, "gather size");
    for (int i = 0; i < n && i < static_cast<int>(gathered.size()); ++i)
      check(gathered[i] == std::string(static_cast<std::size_t>(i) * 3, 'a' + i), r, "gather rank " + std::to_string(i));
  } else {
    check(gathered.empty(), r, "gather on a non-root rank is empty");
  }
  unsigned char id[128];  // sizeof(ncclUniqueId) is 128
  for (int i = 0; i < 128; ++i) id[i] = static_cast<unsigned char>(r == 0 ? i : 255);
  comm.broadcast_bytes(id, sizeof id);
  bool same = true;
  for (int i = 0; i < 128; ++i) same = same && id[i] == i;
  check(same, r, "broadcast of 128 bytes");
  check(broadcast_string(comm, r == 0 ? std::string(5000, 'z') : "") == std::string(5000, 'z'), r, "broadcast_string");
  std::string agreed;
  try {
    agree(comm, [&] {
      if (r == n - 1) throw xs::input_error("heads", "P does not divide 6");
    });
  } catch (const RankAgreedError& e) {
    agreed = e.what();
  }
  check(agreed == "rank " + std::to_string(n - 1) + ": heads: P does not divide 6", r, "agreement: got '" + agreed + "'");
}

void check_app_loop(RankComm& comm, const std::string& dir) {
  const int r = comm.rank();
  AppBenchPlan plan;
  plan.suite = "fake";
  for (int i = 0; i < 2; ++i) plan.points.push_back({"fake.mpi", "mpi", json{{"M", 1024 * (i + 1)}}, "M"});
  plan.identity.backend = "gpu";
  plan.output_path = r == 0 ? dir + "/result.json" : dir + "/rank" + std::to_string(r) + ".json";
  plan.progress = false;
  plan.describe_rank = [r] { return json{{"uuid", "GPU-fake-" + std::to_string(r)}, {"pid", ::getpid()}}; };
  std::vector<std::uint64_t> seeds;
  const AppBenchOutcome outcome = run_app_points(plan, comm, [&](std::size_t, const AppPointSpec& spec,
                                                                 const PointContext& c) {
    seeds.push_back(c.seed);
    xs::report::AppPoint p;
    p.id = spec.id;
    p.suite = "fake";
    p.axes = spec.axes;
    std::vector<double> t{1e-6, 1e-6, 1e-6};
    t[static_cast<std::size_t>(c.comm.rank()) % 3] = 1e-6 * (2 + c.comm.rank());  // one slow trial per rank
    p.variants["fa"] = xs::summarize(t);
    return p;
  });
  check(write_app_result(plan, outcome, {}) == 0, r, "exit code");
  // Every rank's seeds equal rank 0's: gather them as text.
  const auto all = comm.gather_bytes_to_root(json(seeds).dump());
  if (r == 0) {
    for (const auto& s : all) check(s == all[0], r, "seeds differ: " + s + " vs " + all[0]);
    const json file = xs::report::read_json_file(dir + "/result.json");
    check(file["meta"]["ranks"].size() == static_cast<std::size_t>(comm.size()), r, "meta.ranks");
    check(file["meta"]["launch"]["model"] == "mpi", r, "meta.launch.model");
    // With 3 ranks: trial t is slow on rank t (2, 3, 4 us) -> merged {2, 3, 4} us, median 3 us.
    const double median_s = file["points"][0]["variants"]["fa"]["median"].get<double>();
    check(comm.size() != 3 || std::abs(median_s - 3e-6) < 1e-12, r, "merged median " + std::to_string(median_s));
  }
  comm.barrier();
  check(!std::filesystem::exists(plan.output_path) || r == 0, r, "a non-root rank wrote " + plan.output_path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 3 && std::string(argv[2]) == "stuck")) {
    std::fprintf(stderr, "usage: mpiexec -np N xs_mpi_rank_check <empty folder> [stuck]\n");
    return 2;
  }
  if (argc == 3) {
    MpiSession session(&argc, &argv);
    const auto comm = session.make_comm(600);
    if (comm->rank() == 1) {  // its own error: it never reaches the barrier rank 0 waits in
      if (!session.exit_barrier(2)) session.abort_all(3);
      return 0;  // not reached: rank 0 is in the barrier, not at the exit barrier
    }
    comm->barrier();
    return 0;  // not reached: MPI_Abort ends this rank
  }
  int failures = 0;
  {
    MpiSession session(&argc, &argv);
    const auto comm = session.make_comm(60);
    try {
      check_collectives(*comm);
      check_app_loop(*comm, argv[1]);
    } catch (const std::exception& e) {
      check(false, comm->rank(), std::string("exception: ") + e.what());
    }
    int mine = g_failures;
    MPI_Allreduce(&mine, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (comm->rank() == 0) std::printf("%d ranks, %d failed checks\n", comm->size(), failures);
    if (!session.exit_barrier(60)) session.abort_all(3);
  }
  return failures == 0 ? 0 : 1;
}
