// xstage moe host layer: the Burst-Gap model's predictions for one MegaMoE configuration (paper section
// 4.2, eqs. 9-16; design notes "Formulas"), so `xstage-predict moe` and the bench reproduce every derived
// number, plus the fluid whole-kernel estimate of both schedules. Plain C++, SI units (s, bytes, bytes/s).
#pragma once
#include <optional>
#include <vector>

#include "xs/moe/point/problem.hpp"

namespace xs::moe {

struct MoeModelInputs {
  int hidden = 0;                        // h
  int intermediate = 0;                  // I (expert intermediate)
  int num_ranks = 8;                     // P: a share (P-1)/P of the Combine rows is remote
  int num_sms = 132;                     // K_SM: participating SMs = aligned producers of a burst
  int device_sms = 132;                  // SMs the device throughput F is spread over: F_SM = F / device_sms
  int block_m = 128;                     // b_m
  int block_n = 128;                     // b_n
  int elem_bytes = 2;                    // Combine element size (bf16 in both precisions)
  double tensor_flops_per_s = 0;         // F, tensor throughput of the whole device
  double drain_rate_bps = 0;             // R
  double tiss0_s = 0;                    // T_iss^0(K_SM, V), backpressure-free issue time
  std::optional<double> capacity_bytes;  // Q(K_SM); empty = not identified by the calibration
};

// A bound that needs Q(K) is "not decided" while Q is not identified (as xstage-predict reports it).
enum class BoundVerdict { kMet, kViolated, kNotDecided };
const char* bound_verdict_name(BoundVerdict verdict);  // "met", "violated", "not decided"

struct MoePrediction {
  double flops_per_sm_per_s = 0;       // F_SM = F / device_sms
  double l1_mainloop_s = 0;            // T_L1^mma = 2 b_m b_n h / F_SM
  double l2_mainloop_s = 0;            // T_L2^mma = 2 b_m b_n I / F_SM
  double l1_per_l2_tiles = 0;          // n1/n2 = 2I/h (Linear-1 tiles per Linear-2 tile, per row block)
  double tile_combine_bytes = 0;       // V_t = b_m b_n s_out, one L2 tile's Combine rows
  double burst_bytes = 0;              // V = K_SM V_t (P-1)/P, remote part of an aligned L2 burst
  double drain_time_s = 0;             // V/R
  // Expert-wave schedule.
  double wave_gap_s = 0;               // G_wave ~ T_L2 (consecutive L2 tiles)
  double wave_issue_overhead_s = 0;    // dT_iss^wave = [V/R - G_wave - T_iss^0]+ (eq. 9)
  double wave_stall_per_l2_tile_s = 0; // [max(T_iss^0, V/R) - T_cover]+, T_cover = T_L2 (eq. 15)
  // Interleaved schedule (Algorithm 1).
  double interleaved_gap_s = 0;        // G_int = T_L2 + (n1/n2) T_L1 (eq. 12)
  double interleaved_issue_overhead_s = 0;  // dT_iss^int = [dT_iss^wave - (n1/n2) T_L1]+ (eq. 13)
  double interleaved_stall_per_l2_tile_s = 0;  // [V/R - G_int]+: period per L2 tile >= V/R, compute G_int
  double interleaved_injection_rate_bps = 0;   // V / (T_iss^0 + G_int), eq. 14's left side
  bool rate_bound_ok = false;          // eq. 14: V / (T_iss^0 + G_int) <= R
  double peak_outstanding_bytes = 0;   // [V - R T_iss^0]+ (eq. 6)
  BoundVerdict capacity_bound = BoundVerdict::kNotDecided;  // eq. 10: V - R T_iss^0 <= Q(K_SM)
  // Is interleaving sufficient (eqs. 10 and 14)? kViolated as soon as one bound fails (decided without Q
  // when the rate bound fails), kMet when both hold, kNotDecided when the rate bound holds and Q is unknown.
  BoundVerdict interleaving_sufficient = BoundVerdict::kNotDecided;
  double lead_knee_rows = 0;           // D_knee = b_n K_SM / (2I) (eq. 16)
};

// Throws input_error naming the field: h, I, P, K_SM, device_sms, b_m, b_n, elem_bytes < 1; F or R <= 0 or
// not finite; T_iss^0 < 0; Q given but <= 0 or not finite.
MoePrediction predict_megamoe(const MoeModelInputs& in);

// ---- Fluid whole-kernel estimate (design notes, end of "Formulas") ----------------------------------
// The kernel as a sequence of expert waves over K_SM SMs. Within a wave, an L1 phase of length
// C1 = n1 T_L1 / K_SM injects nothing and drains up to R C1 of the X-Stage queue; the L2 phase of length
// C2 = n2 T_L2 / K_SM injects the wave's remote Combine bytes V_w. Where the queue would pass Q, the phase
// stretches until the excess has drained: C2' = max(C2, (q + V_w - Q) / R). The kernel ends after the last
// byte drained (its system-scope fence). Interleaved: the rates mix perfectly, so the kernel takes
// max(total compute, total remote bytes / R). Not modelled: T_iss^0, tile quantisation over SMs, L1/L2
// dependency spins, the local share's HBM writes.
struct WaveWork {
  double num_l1_tiles = 0;
  double num_l2_tiles = 0;
  double remote_bytes = 0;  // Combine bytes of this wave's L2 tiles that go to other ranks
};
struct FluidEstimate {
  double compute_s = 0;      // sum over waves of C1 + C2
  double drain_s = 0;        // total remote bytes / R
  double wave_schedule_s = 0;
  double interleaved_s = 0;  // max(compute_s, drain_s)
};
// capacity_bytes may be +infinity (no capacity limit). Throws input_error for K_SM < 1, R <= 0, negative
// mainloop times or capacity, or a wave with negative work.
FluidEstimate fluid_kernel_estimate(const std::vector<WaveWork>& waves, int num_sms, double l1_mainloop_s,
                                    double l2_mainloop_s, double drain_rate_bps, double capacity_bytes);

// The expert waves of a problem under ExpertWave{experts_per_wave}: consecutive groups of local experts,
// their L1/L2 tile counts at tile width block_n (validated as tile_space does) and remote Combine bytes
// (valid pool rows whose dst rank is not the emulated rank, h * elem_bytes each).
std::vector<WaveWork> expert_waves(const MoeProblem& problem, int block_n, int experts_per_wave, int elem_bytes = 2);

}  // namespace xs::moe
