// xstage moe host layer: the float64 CPU reference of one emulated rank (small shapes only: O(rows h I)),
// with the kernel's rounding points: bf16 inputs, exact (float64) dot products, the activation
// act = bf16(silu(gate) * up * weight) that Linear-1 writes, and the Combine row dot(act, w2 row) in
// float64 and rounded to bf16. Plain C++; the GPU fp32 reference is checked against it.
#pragma once
#include <cstdint>
#include <vector>

#include "moe/problem.hpp"

namespace xs::moe {

struct MoeReference {
  // [num_pool_rows][I] bf16: bf16(silu(gate) * up * weight); 0 on padding rows (Dispatch zero-fills them).
  std::vector<std::uint16_t> act_bf16;
  // [num_ranks][slots_per_rank * h]: Combine rows dst[rank][slot][col] in float64, no final rounding;
  // NaN where this rank writes nothing (see expected_written_slots).
  std::vector<std::vector<double>> combine;
  // The same rounded to bf16 (round-to-nearest-even); kBf16Poison (0xFFFF) where nothing is written.
  std::vector<std::vector<std::uint16_t>> combine_bf16;
};

// arrival: [num_arrivals][h] bf16; w1: [E/P][2I][h] bf16, row 2j = gate_j, row 2j+1 = up_j; w2: [E/P][h][I]
// bf16 (the layouts of MegaMoeArgs). silu(g) = g / (1 + exp(-g)). Throws input_error naming the vector
// whose size does not match the problem.
MoeReference cpu_moe_reference(const MoeProblem& problem, const std::vector<std::uint16_t>& arrival,
                               const std::vector<std::uint16_t>& w1, const std::vector<std::uint16_t>& w2);

}  // namespace xs::moe
