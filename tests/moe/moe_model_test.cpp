// xstage moe unit tests: the MegaMoE model (design notes "Formulas") against hand-computed numbers and the
// notes' derived figures (V ~ 3.8 MB, V/R ~ 72 us, D_knee), the Q-not-identified verdict, input checks, and
// the fluid whole-kernel estimate on a worked example.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "xs/common/error.hpp"
#include "xs/moe/model/moe_model.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// DSv4-Flash (h 4096, I 2048), EP = 8, b_n 128 on the host target: R = 53 GB/s (design notes section 1).
MoeModelInputs flash(int num_sms) {
  MoeModelInputs in;
  in.hidden = 4096;
  in.intermediate = 2048;
  in.num_ranks = 8;
  in.num_sms = num_sms;
  in.tensor_flops_per_s = 660e12;  // F_SM = 5 TFLOP/s (inside the notes' 562-750 TFLOPS grouped-GEMM range)
  in.drain_rate_bps = 53e9;
  in.tiss0_s = 10e-6;
  in.capacity_bytes = 2 * kMiB;
  return in;
}

TEST(MoeModel, NotesDerivedVolumesAndKnee) {
  const MoePrediction p132 = predict_megamoe(flash(132));
  EXPECT_DOUBLE_EQ(p132.tile_combine_bytes, 32768.0);            // 128 x 128 x 2 B
  EXPECT_DOUBLE_EQ(p132.burst_bytes, 132.0 * 32768 * 7 / 8);     // 132 x 28 KiB = 3,784,704 B ~ 3.8 MB
  EXPECT_NEAR(p132.drain_time_s, 72e-6, 1e-6);                   // "V/R ~ 72 us"
  EXPECT_DOUBLE_EQ(p132.drain_time_s, 3784704.0 / 53e9);
  const MoePrediction p66 = predict_megamoe(flash(66));
  EXPECT_DOUBLE_EQ(p66.burst_bytes, 1892352.0);                  // ~1.9 MB < Q = 2 MiB
  EXPECT_NEAR(p66.drain_time_s, 36e-6, 1e-6);                    // "V/R ~ 36 us"
  EXPECT_DOUBLE_EQ(p66.lead_knee_rows, 128.0 * 66 / 4096);       // eq. 16: 2.0625 rows
  EXPECT_DOUBLE_EQ(p132.lead_knee_rows, 128.0 * 132 / 4096);
}

TEST(MoeModel, MainloopsGapsAndStallsByHand) {
  const MoePrediction p = predict_megamoe(flash(132));
  EXPECT_DOUBLE_EQ(p.flops_per_sm_per_s, 5e12);
  EXPECT_DOUBLE_EQ(p.l1_mainloop_s, 2.0 * 128 * 128 * 4096 / 5e12);  // 26.8435456 us
  EXPECT_DOUBLE_EQ(p.l2_mainloop_s, 2.0 * 128 * 128 * 2048 / 5e12);  // 13.4217728 us
  EXPECT_DOUBLE_EQ(p.l1_per_l2_tiles, 1.0);                          // 2I/h
  const double v_over_r = 3784704.0 / 53e9, t_l1 = 26.8435456e-6, t_l2 = 13.4217728e-6;
  EXPECT_DOUBLE_EQ(p.wave_gap_s, p.l2_mainloop_s);
  EXPECT_NEAR(p.wave_stall_per_l2_tile_s, v_over_r - t_l2, 1e-15);          // [V/R - T_L2]+
  EXPECT_NEAR(p.wave_issue_overhead_s, v_over_r - t_l2 - 10e-6, 1e-15);     // eq. 9 at G_wave
  EXPECT_NEAR(p.interleaved_gap_s, t_l2 + t_l1, 1e-15);                     // eq. 12
  EXPECT_NEAR(p.interleaved_issue_overhead_s, v_over_r - t_l2 - 10e-6 - t_l1, 1e-15);  // eq. 13
  EXPECT_NEAR(p.interleaved_stall_per_l2_tile_s, v_over_r - t_l2 - t_l1, 1e-15);
  EXPECT_NEAR(p.interleaved_injection_rate_bps, 3784704.0 / (10e-6 + t_l2 + t_l1), 1e-3);  // 75.3 GB/s
  EXPECT_FALSE(p.rate_bound_ok);  // K_SM = 132: drain-bound under both schedules (notes section 1)
  EXPECT_DOUBLE_EQ(p.peak_outstanding_bytes, 3784704.0 - 53e9 * 10e-6);
  EXPECT_EQ(p.capacity_bound, BoundVerdict::kViolated);  // 3.25 MB > 2 MiB
  EXPECT_EQ(p.interleaving_sufficient, BoundVerdict::kViolated);
}

TEST(MoeModel, NotesQualitativeClaimsAtHalfTheSms) {
  // K_SM = 66, same per-SM speed: eq. 14 holds for DSv4-Flash (n1/n2 = 1) but fails for Qwen3.5
  // (I = 1024: n1/n2 = 0.5, T_L2 halves); the coarse DiT-MoE (I = 4h) has no wave stall at all.
  const MoePrediction flash66 = predict_megamoe(flash(66));
  EXPECT_TRUE(flash66.rate_bound_ok);
  EXPECT_EQ(flash66.capacity_bound, BoundVerdict::kMet);
  EXPECT_EQ(flash66.interleaving_sufficient, BoundVerdict::kMet);
  EXPECT_GT(flash66.wave_stall_per_l2_tile_s, 20e-6);   // V/R - T_L2 = 22.3 us
  EXPECT_DOUBLE_EQ(flash66.interleaved_stall_per_l2_tile_s, 0.0);
  MoeModelInputs qwen = flash(66);
  qwen.intermediate = 1024;
  const MoePrediction q = predict_megamoe(qwen);
  EXPECT_DOUBLE_EQ(q.l1_per_l2_tiles, 0.5);
  EXPECT_FALSE(q.rate_bound_ok);
  EXPECT_EQ(q.interleaving_sufficient, BoundVerdict::kViolated);
  MoeModelInputs dit = flash(66);
  dit.hidden = 1408;
  dit.intermediate = 5632;
  const MoePrediction d = predict_megamoe(dit);
  EXPECT_GT(d.l2_mainloop_s, d.drain_time_s);
  EXPECT_DOUBLE_EQ(d.wave_stall_per_l2_tile_s, 0.0);
}

TEST(MoeModel, UnidentifiedCapacityLeavesTheVerdictOpenOnlyWhereTheRateBoundHolds) {
  MoeModelInputs in = flash(66);
  in.capacity_bytes.reset();
  const MoePrediction open = predict_megamoe(in);
  EXPECT_TRUE(open.rate_bound_ok);
  EXPECT_EQ(open.capacity_bound, BoundVerdict::kNotDecided);
  EXPECT_EQ(open.interleaving_sufficient, BoundVerdict::kNotDecided);
  EXPECT_STREQ(bound_verdict_name(open.interleaving_sufficient), "not decided");
  in = flash(132);
  in.capacity_bytes.reset();
  const MoePrediction failed = predict_megamoe(in);
  EXPECT_EQ(failed.capacity_bound, BoundVerdict::kNotDecided);
  EXPECT_EQ(failed.interleaving_sufficient, BoundVerdict::kViolated);  // eq. 14 fails whatever Q is
  in = flash(66);
  in.capacity_bytes = 1.0 * kMiB;  // 1.36 MB peak > 1 MiB
  EXPECT_EQ(predict_megamoe(in).capacity_bound, BoundVerdict::kViolated);
  EXPECT_EQ(predict_megamoe(in).interleaving_sufficient, BoundVerdict::kViolated);
}

TEST(MoeModel, EdgeCases) {
  MoeModelInputs in = flash(132);
  in.num_ranks = 1;  // no remote rank: no burst at all
  const MoePrediction p = predict_megamoe(in);
  EXPECT_DOUBLE_EQ(p.burst_bytes, 0.0);
  EXPECT_DOUBLE_EQ(p.wave_stall_per_l2_tile_s, 0.0);
  EXPECT_TRUE(p.rate_bound_ok);
  EXPECT_EQ(p.interleaving_sufficient, BoundVerdict::kMet);
  in = flash(132);
  in.block_n = 256;  // doubles V_t and both mainloops, halves nothing else
  const MoePrediction wide = predict_megamoe(in);
  EXPECT_DOUBLE_EQ(wide.burst_bytes, 2 * predict_megamoe(flash(132)).burst_bytes);
  EXPECT_DOUBLE_EQ(wide.l2_mainloop_s, 2 * predict_megamoe(flash(132)).l2_mainloop_s);
  EXPECT_DOUBLE_EQ(wide.lead_knee_rows, 256.0 * 132 / 4096);
  in = flash(132);
  in.tiss0_s = 1e-3;  // T_iss^0 above V/R: the storers' own issue time is the span
  EXPECT_NEAR(predict_megamoe(in).wave_stall_per_l2_tile_s, 1e-3 - 13.4217728e-6, 1e-15);
  EXPECT_DOUBLE_EQ(predict_megamoe(in).peak_outstanding_bytes, 0.0);
}

TEST(MoeModel, RejectsBadInputs) {
  const auto field_of = [](const MoeModelInputs& in) {
    try {
      predict_megamoe(in);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      return e.field();
    }
    return std::string("(no error)");
  };
  MoeModelInputs in = flash(66);
  in.tensor_flops_per_s = 0;
  EXPECT_EQ(field_of(in), "tensor_flops_per_s");
  in = flash(66);
  in.drain_rate_bps = -1;
  EXPECT_EQ(field_of(in), "drain_rate");
  in = flash(66);
  in.num_sms = 0;
  EXPECT_EQ(field_of(in), "num_sms");
  in = flash(66);
  in.capacity_bytes = 0.0;
  EXPECT_EQ(field_of(in), "capacity");
  in = flash(66);
  in.tiss0_s = NAN;
  EXPECT_EQ(field_of(in), "tiss0");
  in = flash(66);
  in.intermediate = 0;
  EXPECT_EQ(field_of(in), "intermediate");
}

TEST(FluidEstimate, WorkedExample) {
  // K_SM 1, T_L1 = T_L2 = 1 s, R = 1 B/s; two waves of (2 L1, 1 L2, 4 B).
  const std::vector<WaveWork> waves = {{2, 1, 4}, {2, 1, 4}};
  // Q = 1 B: each L2 phase stretches to (q + 4 - 1)/R = 3 s with q = 0 at its start (the 2 s L1 phase
  // drained the 1 B left); 2 + 3 + 2 + 3 + final drain 1 = 11 s.
  const FluidEstimate small_q = fluid_kernel_estimate(waves, 1, 1.0, 1.0, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(small_q.compute_s, 6.0);
  EXPECT_DOUBLE_EQ(small_q.drain_s, 8.0);
  EXPECT_DOUBLE_EQ(small_q.wave_schedule_s, 11.0);
  EXPECT_DOUBLE_EQ(small_q.interleaved_s, 8.0);
  // No capacity limit: q = 3 after wave 1, 1 after the next L1 phase, 4 after wave 2: 6 + 4 = 10 s.
  const FluidEstimate no_q = fluid_kernel_estimate(waves, 1, 1.0, 1.0, 1.0, INFINITY);
  EXPECT_DOUBLE_EQ(no_q.wave_schedule_s, 10.0);
  // Two SMs halve the compute phases: C1 = 1, C2 = 0.5.
  EXPECT_DOUBLE_EQ(fluid_kernel_estimate(waves, 2, 1.0, 1.0, 1.0, INFINITY).compute_s, 3.0);
  EXPECT_THROW(fluid_kernel_estimate(waves, 0, 1.0, 1.0, 1.0, 1.0), Error);
  EXPECT_THROW(fluid_kernel_estimate(waves, 1, 1.0, 1.0, 0.0, 1.0), Error);
  EXPECT_THROW(fluid_kernel_estimate({{-1, 1, 1}}, 1, 1.0, 1.0, 1.0, 1.0), Error);
}

TEST(FluidEstimate, WaveScheduleNeverBeatsInterleavedAndMoreCapacityNeverHurts) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(0.0, 10.0);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<WaveWork> waves(1 + trial % 7);
    for (auto& w : waves) w = {u(rng), u(rng), 100 * u(rng)};
    const double r = 1 + u(rng), q = 10 * u(rng);
    const FluidEstimate a = fluid_kernel_estimate(waves, 1 + trial % 3, 1.0 + u(rng), 0.5 + u(rng), r, q);
    const FluidEstimate b = fluid_kernel_estimate(waves, 1 + trial % 3, 1.0, 1.0, r, q);
    EXPECT_GE(a.wave_schedule_s, a.interleaved_s * (1 - 1e-12));
    EXPECT_GE(b.wave_schedule_s, fluid_kernel_estimate(waves, 1 + trial % 3, 1.0, 1.0, r, 2 * q + 1).wave_schedule_s *
                                     (1 - 1e-12));
  }
}

TEST(FluidEstimate, ExpertWavesOfAProblem) {
  RoutingParams rp;
  rp.num_ranks = 4;
  rp.tokens_per_rank = 300;
  rp.num_experts = 16;
  rp.top_k = 4;
  rp.zipf_alpha = 0.5;
  rp.seed = 3;
  const MoeProblem pb = build_problem(generate_routing(rp), 256, 128);
  const auto waves = expert_waves(pb, 128, 3);
  ASSERT_EQ(waves.size(), 2u);  // 4 local experts in waves of 3, 1
  double l1 = 0, l2 = 0, bytes = 0;
  for (const auto& w : waves) {
    l1 += w.num_l1_tiles;
    l2 += w.num_l2_tiles;
    bytes += w.remote_bytes;
  }
  EXPECT_DOUBLE_EQ(l1, pb.num_row_blocks * 2.0);  // 2I / b_n = 2
  EXPECT_DOUBLE_EQ(l2, pb.num_row_blocks * 2.0);  // h / b_n = 2
  EXPECT_DOUBLE_EQ(bytes, static_cast<double>(pb.num_remote_pairs) * 256 * 2);
  EXPECT_EQ(expert_waves(pb, 128, 99).size(), 1u);
  EXPECT_THROW(expert_waves(pb, 128, 0), Error);
  EXPECT_THROW(expert_waves(pb, 96, 1), Error);
}

}  // namespace
}  // namespace xs::moe
