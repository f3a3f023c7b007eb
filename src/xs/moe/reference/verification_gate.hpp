// xstage moe host layer: the pass rule of a verified MegaMoE launch (judging code; plain C++). The runner
// feeds it the device comparison's counts; the tests feed it a CPU mirror of that comparison on fabricated
// outputs (an all-zero output, a gain error) to show that the rule can fail.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace xs::moe {

// Elementwise |t - r| <= abs_tol + rel_tol |r| on every compared element, and over all of them the relative
// difference 1 - 2<t,r> / (|t|^2 + |r|^2) <= max_relative_difference.
struct CombineTolerance {
  double abs_tol = 0, rel_tol = 0, max_relative_difference = 0;
};

// The tolerance of a precision against the fp32 GPU reference (the kernel's rounding points), the absolute
// part scaled to the reference's RMS over the compared elements:
//   bf16: rel 1.6e-2 (two bf16 steps: the two sides' roundings of nearby fp32 sums), abs 2e-2 x RMS (an
//         intermediate element that rounds to the other bf16 neighbour moves an output by ~2^-8 of one
//         |act_j w2[c][j]| term, a few 1e-3 of the RMS at I = 128, less at larger I), relative difference
//         <= 1e-5 (measured: <= 4.4e-7 on the committed H200 points).
//   fp8:  rel 6e-2, abs 0.25 x RMS (an act code that flips one e4m3 step moves an output by up to 1/8 of
//         its |act_j w2[c][j]| term), relative difference <= 1e-4 (measured: <= 6.7e-6).
// An all-zero output fails both precisions: relative difference 1, and every element above ~0.27 RMS.
// input_error for an unknown precision or an RMS that is not finite and > 0.
CombineTolerance combine_tolerance(const std::string& precision, double reference_rms);

// What the comparison counted (src/xs/kernels/moe/compare_combine.hpp's CombineCompareResult, the subset judged).
struct CombineCounts {
  std::uint64_t compared_elements = 0, wrong_elements = 0;
  std::uint64_t unwritten_slots = 0, unexpected_slots = 0, multi_writer_slots = 0;
  double relative_difference = 0;
};

struct CombineVerdict {
  bool passed = false;
  std::string reason;  // empty when passed; else every failed condition, "; "-separated
};

// check_unexpected false: across ranks other ranks write the slots this rank does not target.
CombineVerdict judge_combine(const CombineCounts& counts, const CombineTolerance& tol, bool check_unexpected = true);

// ---- CPU mirror of the device comparison (tests; small destinations) ---------------------------------------
// test and ref: [slots][hidden] bf16 bits of one rank; writers[slot]: how many pool rows target the slot (0:
// none may write it). Every slot with writers is compared; poisoned elements count as unwritten.
CombineCounts compare_combine_host(const std::vector<std::uint16_t>& test, const std::vector<std::uint16_t>& ref,
                                   const std::vector<std::uint32_t>& writers, int hidden, const CombineTolerance& tol,
                                   std::uint16_t poison_bits);
// RMS of ref over the slots with writers (the scale combine_tolerance takes).
double reference_rms_host(const std::vector<std::uint16_t>& ref, const std::vector<std::uint32_t>& writers, int hidden);

}  // namespace xs::moe
