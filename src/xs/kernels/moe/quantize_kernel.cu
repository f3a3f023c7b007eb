// xstage kernels layer (moe): fp8 quantization kernels and the e4m3 conversion check (quantize.hpp).
// Rows: one warp per (row, column group), grid-stride. Blocks: one 256-thread CTA per 128 x 128 block,
// an amax pass and a quantize pass (the block is re-read from L2). Bandwidth-bound; both are one-off
// preparation of the runner's inputs, not measured.
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "xs/common/error.hpp"
#include "xs/kernels/moe/quantize.cuh"
#include "xs/kernels/moe/quantize.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::moe {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kMaxGrid = 1u << 16;

__global__ void __launch_bounds__(kThreads) quantize_rows_fp8_kernel(QuantizeRowsFp8Args a) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t groups_per_row = a.cols / a.group_cols;
  const std::int64_t num_items = a.rows * groups_per_row;
  const auto* in = static_cast<const __nv_bfloat16*>(a.input);
  auto* out = static_cast<std::uint8_t*>(a.output);
  for (std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; item < num_items;
       item += static_cast<std::int64_t>(gridDim.x) * kWarps) {
    const std::int64_t row = item / groups_per_row, group = item % groups_per_row;
    const std::int64_t base = row * a.cols + group * a.group_cols;
    const float scale = warp_quantize_group(
        a.group_cols, lane, [&](int i) { return __bfloat162float(in[base + i]); },
        [&](int i, std::uint8_t code) { out[base + i] = code; });
    if (lane == 0) a.scales[item] = scale;  // [rows][groups_per_row]: item is exactly that index
  }
}

__device__ __forceinline__ float block_max_all(float v, float* shared) {
  v = warp_max_all(v);
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  float m = shared[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) m = fmaxf(m, shared[w]);
  return m;
}

// blockIdx.x = (matrix * n_blocks + block_row) * k_blocks + block_col: exactly the scale index.
__global__ void __launch_bounds__(kThreads) quantize_blocks_fp8_kernel(QuantizeBlocksFp8Args a) {
  __shared__ float warp_max[kWarps];
  const int k_blocks = a.k / kQuantBlock, n_blocks = a.n / kQuantBlock;
  const std::int64_t blk = blockIdx.x;
  const std::int64_t block_col = blk % k_blocks, block_row = (blk / k_blocks) % n_blocks;
  const std::int64_t matrix = blk / (static_cast<std::int64_t>(k_blocks) * n_blocks);
  const std::int64_t origin =
      (matrix * a.n + block_row * kQuantBlock) * static_cast<std::int64_t>(a.k) + block_col * kQuantBlock;
  const auto* in = static_cast<const __nv_bfloat16*>(a.input);
  auto* out = static_cast<std::uint8_t*>(a.output);
  const auto offset = [&](int i) {
    return origin + static_cast<std::int64_t>(i / kQuantBlock) * a.k + i % kQuantBlock;
  };
  float amax = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < kQuantBlock * kQuantBlock; i += kThreads)
    amax = fmaxf(amax, fabsf(__bfloat162float(in[offset(i)])));
  const float scale = e4m3_scale_for_amax(block_max_all(amax, warp_max));
  for (int i = static_cast<int>(threadIdx.x); i < kQuantBlock * kQuantBlock; i += kThreads)
    out[offset(i)] = cvt_e4m3_rn_satfinite(__fdiv_rn(__bfloat162float(in[offset(i)]), scale));
  if (threadIdx.x == 0) a.scales[blk] = scale;
}

__global__ void init_check_kernel(E4m3ConversionCheck* r) { *r = E4m3ConversionCheck{}; }

__global__ void __launch_bounds__(kThreads) e4m3_conversion_check_kernel(E4m3ConversionCheckArgs a) {
  E4m3ConversionCheck* r = a.result;
  std::uint64_t checked = 0, mismatches = 0, nans = 0, nan_not_nan = 0;
  std::uint32_t first_bad = ~0u, nan_codes = 0;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.num_patterns;
       i += stride) {
    const auto bits = static_cast<std::uint32_t>(a.first_bits + i);
    const float x = __uint_as_float(bits);
    const std::uint8_t hw = cvt_e4m3_rn_satfinite(x);
    if (isnan(x)) {
      ++nans;
      nan_not_nan += !e4m3_is_nan(hw);
      nan_codes |= hw == 0x7F ? 1u : hw == 0xFF ? 2u : 0u;
      continue;
    }
    ++checked;
    if (hw != float_to_e4m3(x)) {
      ++mismatches;
      if (bits < first_bad) first_bad = bits;
    }
  }
  const auto u64 = [](std::uint64_t* p) { return reinterpret_cast<unsigned long long*>(p); };
  if (checked) atomicAdd(u64(&r->encode_checked), checked);
  if (nans) atomicAdd(u64(&r->nan_inputs), nans);
  if (nan_not_nan) atomicAdd(u64(&r->nan_not_nan), nan_not_nan);
  if (nan_codes) atomicOr(&r->nan_codes_seen, nan_codes);
  if (mismatches) {
    atomicAdd(u64(&r->encode_mismatches), mismatches);
    atomicMin(&r->first_mismatch_bits, first_bad);
  }
  if (blockIdx.x == 0 && threadIdx.x < 256) {  // decode: hardware e4m3 -> f16 (exact) -> f32
    const auto code = static_cast<std::uint8_t>(threadIdx.x);
    const float hw = __half2float(__half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3)));
    const float sw = e4m3_to_float(code);
    const bool same = isnan(hw) ? isnan(sw) : __float_as_uint(hw) == __float_as_uint(sw);
    if (!same) {
      atomicAdd(&r->decode_mismatches, 1u);
      atomicMin(&r->first_decode_mismatch, static_cast<std::uint32_t>(code));
    }
  }
}

// A second pass only to report the hardware code of the first mismatch (cheap, one thread).
__global__ void first_mismatch_code_kernel(E4m3ConversionCheck* r) {
  if (r->first_mismatch_bits != ~0u)
    r->first_mismatch_hw = cvt_e4m3_rn_satfinite(__uint_as_float(r->first_mismatch_bits));
}

bool misaligned(const void* p, std::uintptr_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment != 0;
}

}  // namespace

void launch_quantize_rows_fp8(const QuantizeRowsFp8Args& a, cudaStream_t stream) {
  if (a.group_cols <= 0 || a.cols <= 0 || a.cols % a.group_cols != 0)
    throw input_error("cols", "quantize_rows_fp8 needs cols a positive multiple of group_cols > 0, got cols " +
                                  std::to_string(a.cols) + ", group_cols " + std::to_string(a.group_cols));
  if (a.rows < 0) throw input_error("rows", "quantize_rows_fp8 needs rows >= 0, got " + std::to_string(a.rows));
  if (a.rows == 0) return;
  if (a.input == nullptr || a.output == nullptr || a.scales == nullptr || misaligned(a.input, 2) ||
      misaligned(a.scales, 4))
    throw input_error("input", "quantize_rows_fp8 needs device input (bf16, 2-byte aligned), output and scales "
                               "(4-byte aligned)");
  const std::int64_t items = a.rows * (a.cols / a.group_cols);
  const std::int64_t blocks = (items + kWarps - 1) / kWarps;
  quantize_rows_fp8_kernel<<<static_cast<unsigned>(blocks < kMaxGrid ? blocks : kMaxGrid), kThreads, 0, stream>>>(a);
  XS_CUDA_CHECK_LAUNCH();
}

void launch_quantize_blocks_fp8(const QuantizeBlocksFp8Args& a, cudaStream_t stream) {
  if (a.n <= 0 || a.n % kQuantBlock != 0)
    throw input_error("n", "quantize_blocks_fp8 needs n a positive multiple of 128, got " + std::to_string(a.n));
  if (a.k <= 0 || a.k % kQuantBlock != 0)
    throw input_error("k", "quantize_blocks_fp8 needs k a positive multiple of 128, got " + std::to_string(a.k));
  if (a.num_matrices < 0)
    throw input_error("num_matrices", "quantize_blocks_fp8 needs num_matrices >= 0, got " +
                                          std::to_string(a.num_matrices));
  if (a.num_matrices == 0) return;
  if (a.input == nullptr || a.output == nullptr || a.scales == nullptr || misaligned(a.input, 2) ||
      misaligned(a.scales, 4))
    throw input_error("input", "quantize_blocks_fp8 needs device input (bf16, 2-byte aligned), output and scales "
                               "(4-byte aligned)");
  const std::int64_t blocks =
      static_cast<std::int64_t>(a.num_matrices) * (a.n / kQuantBlock) * (a.k / kQuantBlock);
  if (blocks > 0x7FFFFFFF) throw input_error("num_matrices", "quantize_blocks_fp8 handles at most 2^31 - 1 blocks");
  quantize_blocks_fp8_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
  XS_CUDA_CHECK_LAUNCH();
}

void launch_e4m3_conversion_check(const E4m3ConversionCheckArgs& a, cudaStream_t stream) {
  if (a.result == nullptr || misaligned(a.result, alignof(E4m3ConversionCheck)))
    throw input_error("result", "e4m3 conversion check needs an aligned device E4m3ConversionCheck");
  if (a.num_patterns > (1ull << 32) - a.first_bits)
    throw input_error("num_patterns", "e4m3 conversion check needs first_bits + num_patterns <= 2^32");
  init_check_kernel<<<1, 1, 0, stream>>>(a.result);
  XS_CUDA_CHECK_LAUNCH();
  e4m3_conversion_check_kernel<<<4096, kThreads, 0, stream>>>(a);
  XS_CUDA_CHECK_LAUNCH();
  first_mismatch_code_kernel<<<1, 1, 0, stream>>>(a.result);
  XS_CUDA_CHECK_LAUNCH();
}

}  // namespace xs::kernels::moe
