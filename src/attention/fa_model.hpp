// xstage attention host layer: the Burst-Gap model's predictions for one FlashAttention-A2A point
// (paper section 4.3): burst volume, Q-loop gap, G*, M_ub*, dt(M) (eq. 18), E_drain, dt_cc / E_cc (eq. 17)
// and the design-test verdict (eq. 10). Reads the kernel's TileShape so predictions match what runs.
// Plain C++ (xs_attention_host).
#pragma once
#include <string>

#include "model/burst_gap.hpp"

namespace xs::attention {

struct FaA2aModelInputs {
  int seq_len = 0;                     // M
  int num_heads = 0;                   // heads this rank computes
  int num_ctas = 132;                  // persistent CTAs = aligned producers K (at most the tile count)
  double drain_rate_bps = 0;           // R
  double tiss0_s = 0;                  // T_iss^0(K, V), backpressure-free issue time of the aligned burst
  double capacity_bytes = 0;           // Q(K); <= 0: unknown, the capacity bound is reported as met
  double sigma_s_per_kv_tile = 0;      // sigma: measured Q-loop time per KV tile
  double completion_latency_s = 0;     // T_lat of eq. 17 (fixed completion latency)
  double cover_s = -1;                 // T_cover of eq. 17 (<= one QK^T tile mainloop); < 0: sigma / 2
};

struct FaA2aPrediction {
  int num_producers = 0;               // K = min(num_ctas, tiles)
  double tile_bytes = 0;               // B_t = b_m d s_out per CTA tile boundary
  double burst_bytes = 0;              // V = K B_t (conservative aligned case)
  double num_bursts = 0;               // N_t = ceil(tiles / K) output-burst waves
  double qloop_gap_s = 0;              // G_Qloop(M) >= sigma M / b_n
  double recovery_gap_s = 0;           // G* = [V/R - T_iss^0]+ (eq. 5)
  double seq_len_bound_tokens = 0;     // M_ub* = b_n G*/sigma (eq. 20)
  double drain_stall_s = 0;            // dt(M) (eq. 18)
  double critical_stall_s = 0;         // dt'(M) = [dt - G_QK]+ (eq. 19), G_QK = cover
  double e_drain_s = 0;                // N_t dt'(M)
  double dt_cc_s = 0;                  // eq. 17
  double e_cc_s = 0;                   // N_t dt_cc
  xs::model::DesignTest design;        // eq. 10 bounds at G = G_Qloop(M)
  std::string verdict;                 // "piggyback" or "reshape"
};

// Throws input_error for non-positive M, heads, R or sigma.
FaA2aPrediction predict_fa_a2a(const FaA2aModelInputs& in);

}  // namespace xs::attention
