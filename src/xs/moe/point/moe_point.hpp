// xstage moe host layer: one point of the megamoe sweep as plain data. The spec names everything that
// shapes the measurement; the result holds each variant's times, its per-tile distributions, the
// verification counts and the routing facts. The CUDA runner (moe_runner) fills it; the bench suite and
// the tests read it. Times in seconds, sizes in bytes.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "xs/moe/point/routing.hpp"
#include "xs/common/stats.hpp"
#include "xs/moe/point/shapes.hpp"
#include "xs/backends/nccl/rank_windows.hpp"

namespace xs::moe {

// megamoe's Combine across P ranks (one process per GPU, or a thread per GPU): each rank's Combine slots
// [T*top_k][h] (bf16) live in its NCCL window; every rank stores the rows of the pairs its experts computed
// straight into the owning rank's window. world_rank is the EP rank this process plays (= the routing's
// emulated rank); the windows must hold >= the point's Combine bytes per rank.
using MoeExchange = runtime::WindowExchange;

struct MoePointSpec {
  MoeShape shape;                 // h, I, E, top_k (configs/moe/models.json)
  std::string precision = "bf16"; // bf16 | fp8 (W8A8, b_n = 128)
  std::string routing = "skewed"; // balanced (alpha 0) | skewed (alpha) — recorded with alpha, gain, seed
  double zipf_alpha = 0.5;
  double gain = 1.0;
  std::uint64_t routing_seed = 1;
  int tokens_per_rank = 6976;     // T
  int num_ranks = 8;              // P (emulated EP degree)
  int num_ctas = 66;              // K_SM
  int block_n = 128;              // b_n
  std::string target = "host";    // local | host | peer:N | nccl:N
  int lead_rows = 0;              // Interleaved D; 0 = auto: model::knee_lead_rows (eq. 16), as the advisor's
  // ExpertWave widths swept as variants (expert_wave_w<n>; one width: the variant is expert_wave itself);
  // widths above E/P are clipped to E/P (one wave), duplicates dropped; empty = {1}. The fastest width is
  // the expert-wave baseline ("expert_wave" in the result, moe_variants.hpp).
  std::vector<int> experts_per_wave;
  int overlap_waves = 4;          // unfused_overlapped: waves of consecutive experts, ~equal row blocks each
  int device = 0;
  int launches_per_graph = 3;     // back-to-back launches per timed replay
  int warmup_rounds = 2;
  int repetitions = 10;           // timed rounds (each variant once per round, rotating order)
  bool verify = true;
  bool instrument = true;         // one extra untimed launch per variant with per-tile records
  // Verification runs the variants starting at position verify_rotation % n (the suite passes the point's
  // index), each on freshly poisoned intermediates; the first verified is the others' bitwise reference.
  int verify_rotation = 0;
  bool cooperative_launch = true; // src/xs/kernels/moe/config.hpp MegaMoeConfig::cooperative_launch
  // Variants to run, in this order (families of moe_variant_names()); empty: every family.
  std::vector<std::string> variants;
  // Tests only: this variant's launches skip the Linear-2 dependency wait (a planted ordering bug that
  // verification must catch). Empty: none.
  std::string fault_skip_l2_wait_variant;
  std::uint64_t input_seed = 0;   // 0: fresh
  // Set on every rank of a multi-rank nccl run (the unfused variant is not built there); null: the one-rank
  // emulation of `target`.
  std::shared_ptr<const MoeExchange> exchange;
};

// Every variant family a point can run, in the default order (moe_variants.hpp expands them):
//   expert_wave, interleaved, serial  the fused kernel under each schedule
//   *_cc                              the completion-coupled epilogue (fence.sc.sys per tile)
//   serial_then_copy                  serial schedule into local send buffers, then the copy-engine Combine
//                                     (no overlap; named "unfused" before)
//   unfused_overlapped                the pipeline a user would write: per wave of experts one launch into
//                                     local send buffers, that wave's Combine copies on a second stream
//                                     overlapping the next wave's GEMMs
//   phase_l1, phase_l2                one GEMM phase whole (src/xs/kernels/moe/megamoe.hpp KernelPhases), serial
inline const std::vector<std::string>& moe_variant_names() {
  static const std::vector<std::string> kNames = {
      "expert_wave",      "interleaved",        "serial",   "expert_wave_cc", "interleaved_cc",
      "serial_then_copy", "unfused_overlapped", "phase_l1", "phase_l2"};
  return kNames;
}

// The routing a point runs (the runner and the bench's advisor build the same one from it).
inline RoutingParams routing_params_of(const MoePointSpec& spec) {
  RoutingParams rp;
  rp.num_ranks = spec.num_ranks;
  rp.tokens_per_rank = spec.tokens_per_rank;
  rp.num_experts = spec.shape.num_experts;
  rp.top_k = spec.shape.top_k;
  rp.zipf_alpha = spec.routing == "balanced" ? 0.0 : spec.zipf_alpha;
  rp.gain = spec.gain;
  rp.seed = spec.routing_seed;
  return rp;
}

// Per-tile distributions of one variant's instrumented launch (tile_stats.hpp computes them).
struct TileDistributions {
  int num_tiles = 0;
  double sm_clock_hz = 0;
  // Medians / p90 over tiles, seconds. L2 store span T_RS and the staging wait are the eq. 15 quantities.
  double l1_mainloop_median_s = 0, l2_mainloop_median_s = 0;
  double l2_store_span_median_s = 0, l2_store_span_p90_s = 0;   // T_RS
  double l1_store_span_median_s = 0;
  double staging_wait_median_s = 0, staging_wait_p90_s = 0, staging_wait_total_s = 0;  // per CTA, summed
  double l2_spin_median_s = 0, l2_spin_p90_s = 0, l2_spin_total_s = 0;               // dependency spin
  // MMA side: waits for a tile's first k-block (the exposed part of the spins and of the load latency).
  double l2_first_wait_total_s = 0, l1_first_wait_total_s = 0;  // per CTA, summed
  double queue_median_s = 0;
  // eq. 15 with each tile's measured successor: predicted [T_RS - T_cover]+ summed over tiles, per CTA
  // (mean over CTAs), against the measured staging waits summed the same way.
  double eq15_predicted_stall_s = 0, eq15_measured_wait_s = 0;
  double kernel_span_s = 0;       // first mainloop start to last store end over all CTAs (globaltimer)
  double entry_to_first_start_median_s = 0, entry_to_first_start_max_s = 0;  // start-up per CTA
  double last_store_to_exit_median_s = 0, last_store_to_exit_max_s = 0;      // end fence + barrier per CTA
  double cta_busy_median_s = 0;   // per CTA: sum of its mainloops
  // A sampled timeline: up to 64 tiles of CTA 0 (kind, start, mainloop, store span, wait) for plots.
  std::vector<std::map<std::string, double>> timeline;
};

struct VariantResult {
  std::string name;               // moe_variants.hpp's variant name (expert_wave_w2, interleaved, phase_l1, ...)
  std::string family;             // its moe_variant_names() family
  std::string schedule;           // expert_wave | interleaved | serial
  std::string mode;               // fused | completion_coupled | serial_then_copy | unfused_overlapped
  std::string phases = "all";     // all | linear1 | linear2
  int lead_rows = 0, experts_per_wave = 0;
  int verify_position = -1;       // place in this point's verification order
  Summary time;               // per launch
  double tflops = 0;              // 2 * pairs * 3 h I / median time (L1 gate+up and L2 of every valid row)
  bool verified = false;
  std::uint64_t wrong_elements = 0, unwritten_slots = 0, unexpected_slots = 0, bitwise_differences = 0;
  double relative_difference = 0;  // 1 - 2<x,y>/(|x|^2 + |y|^2) against the reference
  double abs_tol = 0, rel_tol = 0, max_relative_difference = 0;  // the gate it was judged by
  std::string verification_detail;
  TileDistributions tiles;
};

struct MoePointResult {
  std::string status = "ok";      // ok | skipped | failed
  std::string reason;
  std::uint64_t input_seed = 0;
  int num_ctas = 0, lead_rows = 0;
  std::vector<int> experts_per_wave;  // the widths run (after clipping to E/P)
  std::string best_wave_variant;      // the fastest expert-wave variant (median), the baseline; "" if none ran
  int best_experts_per_wave = 0;
  std::vector<std::string> verification_order;
  double reference_rms = 0;           // RMS of the fp32 reference over the compared Combine elements
  // Routing / problem facts.
  int emulated_rank = 0;
  std::uint64_t received_pairs = 0, remote_pairs = 0;
  int num_row_blocks = 0, num_arrivals = 0;
  double load_imbalance = 0;      // max over ranks / mean of received pairs
  std::vector<std::uint64_t> pairs_per_local_expert;  // m_e: rows each local expert received (baselines)
  double remote_bytes = 0;        // Combine bytes this rank sends to other ranks
  double flops = 0;               // useful GEMM flops of the launch
  std::vector<VariantResult> variants;
  // Same-round paired ratios (> 1: interleaved is faster): the best expert-wave width over interleaved (and
  // each width's), serial_then_copy and unfused_overlapped over interleaved; interleaved_cc over interleaved.
  Summary speedup_interleaved_vs_wave, speedup_interleaved_vs_serial_then_copy,
      speedup_interleaved_vs_unfused_overlapped, cc_vs_fused_interleaved;
  std::map<std::string, Summary> speedup_interleaved_vs_wave_width;  // by variant name
  // Whole-phase rates: useful flops of the phase / the phase variant's median (phase_l1: 2 pairs h 2I,
  // phase_l2: 2 pairs I h); 0 when not run.
  double phase_l1_tflops = 0, phase_l2_tflops = 0;
  bool verified = false;          // every variant verified and bitwise identical to the first
};

}  // namespace xs::moe
