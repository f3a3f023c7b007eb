// xstage remote_store slice (run): the options of a remote-store sweep, shared by xstage-calibrate and the
// remote_store suites of xstage-bench: the backend (gpu or sim with planted parameters) and sweep overrides in the
// one range grammar (--K 1,8,33,132 --B 1KiB:512KiB:x2 --G 0:20us:+1us). The tools add their flags
// (cli/common/sweep_options.hpp).
#pragma once
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xs/bench/backend.hpp"
#include "xs/bench/sweep.hpp"
#include "xs/common/error.hpp"

namespace xs::remote_store {

struct BackendOptions {
  std::string kind = "gpu";     // gpu | sim
  std::string target;           // local | host | peer:N | nccl:N (default host)
  int device_index = 0;
  std::string sim_R = "717GB/s", sim_tiss0 = "0.76us", sim_Q = "4.25MiB", sim_latency = "0";
  double sim_noise = 0.01;
  double sim_alpha = 0.5;                 // sim: planted interference term (suite loaded)
  std::string sim_tile_time = "3us";      // sim: planted mainloop time per tile without stores
  std::uint64_t seed = 1;
};
// Creates the backend; a GPU that cannot be used adds "(no GPU here? add --backend sim)" to the error.
// `rank`: this process's rank of a multi-rank run (bench/rank_comm.hpp): the simulator draws that rank's noise
// (sim::make_sim_backend); the GPU is options.device_index, which the caller sets to the rank's device.
std::unique_ptr<Backend> make_backend(const BackendOptions& options, int rank = 0);
// The local GPUs for bench::RankProcess::run (no_gpu_error in a build without CUDA).
int count_local_gpus();
// What --dry-run can check of the run's backend checks without a device: on the simulator its planted
// parameters and every point, as the run checks them (bench::check_points); nothing more on the GPU.
void check_points_without_device(const BackendOptions& options, const std::vector<bench::ExpandedPoint>& points);

// With --suite (xstage-bench always sets it), K/B/G replace the config's blocks by one block "cli".
// Without it (xstage-calibrate), --K and --B narrow the config's blocks: each block keeps only the K and
// B values that are also in the flag's list, and a block left with none is dropped; --G then needs --suite
// (the built-in gap ranges are sized per block). --only keeps the named blocks (a suite name where no block
// has that name: every block of that suite).
struct SweepOverrides {
  std::string suite, K, B, G;
  std::optional<int> repetitions, num_bursts, warmup_bursts, store_width_bytes, threads_per_producer;
  std::string producer, address_mode, min_stream;
  bool completion = false;
  std::vector<std::string> only;
};
// Applies the flags and validates the expanded sweep. Returns one line for every value the tool changed
// beyond what the flags say (blocks dropped by narrowing, flags that do not apply to isolated blocks, and
// num_bursts/warmup_bursts raised by min_stream_bytes when --bursts/--warmup were given, or always with
// show_sweep_rules, e.g. for --dry-run), for the caller to print before anything runs.
std::vector<std::string> apply_overrides(bench::SweepConfig& config, const SweepOverrides& overrides,
                                         bool show_sweep_rules = false);

// An error of a sweep that the flags `o` changed, named by the flag the user typed where that flag set the value
// ("--reps: 0 must be in [1, 100000]"), not by the config's JSON field ("config.blocks[0] (block cli).repetitions");
// a value from the config file keeps its JSON path. apply_overrides throws its errors so named.
Error name_by_flag(const Error& e, const SweepOverrides& o);

// The blocks of a config: name, suite, K/B/G and point count (xstage-calibrate --list).
void print_blocks(const bench::SweepConfig& config, std::FILE* out);

// Checks before measuring that a calibration sweep has what fit::fit_calibration needs: zero-gap periodic
// points (R) and gap or isolated points (T_iss^0); throws input_error("sweep", ...) naming what is missing.
// Returns a note when Q(K) will not be measured (no isolated points).
std::vector<std::string> check_fittable(const std::vector<bench::ExpandedPoint>& points,
                                        double min_zero_gap_volume_bytes);

// --dry-run: one line per point with every per-point value (bursts, warm-up, repetitions, store width,
// threads, producer, address mode, completion) and the sweep's size (points, bursts, bytes).
void print_dry_run(const std::vector<bench::ExpandedPoint>& points, std::FILE* out);

// "peer:1" -> "peer1": safe in file names.
std::string file_safe(const std::string& text);

}  // namespace xs::remote_store
