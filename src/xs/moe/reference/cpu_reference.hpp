// xstage moe host layer: the float64 CPU reference of one emulated rank (small shapes only: O(rows h I)),
// with the kernel's rounding points: bf16 inputs, exact (float64) dot products, the activation
// act = bf16(silu(gate) * up * weight) that Linear-1 writes, and the Combine row dot(act, w2 row) in
// float64 and rounded to bf16. Plain C++; the GPU fp32 reference is checked against it.
#pragma once
#include <cstdint>
#include <vector>

#include "xs/moe/reference/fp8_host.hpp"
#include "xs/moe/point/problem.hpp"

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

// ---- fp8 W8A8 (megamoe.hpp's fp8 block) ------------------------------------------------------------------
// Inputs as e4m3 codes with fp32 scales: arrival [num_arrivals][h] with scales [num_arrivals][h/128];
// w1 [E/P][2I][h] with [E/P][2I/128][h/128]; w2 [E/P][h][I] with [E/P][h/128][I/128].
struct Fp8Operands {
  Fp8Tensor arrival, w1, w2;
};

// Activations are quantized per row per kActGroupCols intermediate columns (one L1 tile's b_n / 2).
inline constexpr int kActGroupCols = 64;

struct MoeReferenceFp8 {
  // [num_pool_rows][I] e4m3 and [I/64][num_pool_rows] fp32 (the kernel's act / act_scale layouts); padding
  // rows hold what quantizing zeros gives (codes 0, scale 1).
  std::vector<std::uint8_t> act_e4m3;
  std::vector<float> act_scale;
  // As MoeReference: float64 Combine rows (NaN where nothing is written) and their bf16 rounding.
  std::vector<std::vector<double>> combine;
  std::vector<std::vector<std::uint16_t>> combine_bf16;
};

// The fp8 data path in float64: x = deq(arrival row), gate/up = exact dot products with deq(w1),
// a = silu(gate) * up * weight, act quantized per 64 columns with the contract's rule evaluated in double
// (s = amax / 448, 1 if amax = 0; code = e4m3 round-to-nearest-even satfinite of a / s, rounded once from
// double; the stored scale is float(s)), out = dot(deq(act), deq(w2 row)) with deq(act) = code x float(s).
// The device computes a, amax and a / s in fp32, so where a / s lies within fp32 rounding of an e4m3
// rounding boundary (about 1e-6 of the elements) its code can be the neighbour of this one; tests allow
// for such flips. Throws input_error naming the tensor whose size does not match the problem
// (h and I must be multiples of 128).
MoeReferenceFp8 cpu_moe_reference_fp8(const MoeProblem& problem, const Fp8Operands& operands);

// e4m3 code of a double, rounded once (nearest, ties to even; |x| > 448 -> +-448; NaN -> 0x7F).
std::uint8_t double_to_e4m3(double x);

}  // namespace xs::moe
