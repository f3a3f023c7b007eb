// xstage cli layer: options shared by xstage-calibrate and xstage-bench: the backend (gpu or sim with
// planted parameters) and sweep overrides in the one range grammar (--K 1,8,33,132 --B 1KiB:512KiB:x2
// --G 0:20us:+1us).
#pragma once
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/backend.hpp"
#include "bench/sweep.hpp"

namespace xs::cli {

struct BackendOptions {
  std::string kind = "gpu";     // gpu | sim
  std::string target;           // local | host | peer:N | nccl:N (default host)
  int device_index = 0;
  std::string sim_R = "717GB/s", sim_tiss0 = "0.76us", sim_Q = "4.25MiB", sim_latency = "0";
  double sim_noise = 0.01;
  std::uint64_t seed = 1;
};
void add_backend_options(CLI::App& app, BackendOptions& options);
std::unique_ptr<Backend> make_backend(const BackendOptions& options);

struct SweepOverrides {
  std::string suite, K, B, G;   // any of K/B/G/suite replaces the config's blocks by one block
  std::optional<int> repetitions, num_bursts, warmup_bursts, store_width_bytes, threads_per_producer;
  std::string producer, address_mode;
  bool completion = false;
};
void add_sweep_overrides(CLI::App& app, SweepOverrides& overrides, bool with_suite = true);
void apply_overrides(bench::SweepConfig& config, const SweepOverrides& overrides);

// --dry-run: one line per point and the sweep's size (points, bursts, bytes).
void print_dry_run(const std::vector<bench::ExpandedPoint>& points, std::FILE* out);

// "peer:1" -> "peer1": safe in file names.
std::string file_safe(const std::string& text);

}  // namespace xs::cli
