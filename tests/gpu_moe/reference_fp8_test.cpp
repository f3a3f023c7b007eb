// xstage GPU moe tests: the fp8 W8A8 path of the fp32 GPU reference against the float64 CPU fp8 reference
// (act codes and scales, Combine rows elementwise and by the relative-difference measure), against the
// bf16 path (quantization error only), its row-range sampling and argument checks; and compare_combine's
// relative-difference sums on planted data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "../gpu_common/sm90_environment.hpp"
#include "xs/common/error.hpp"
#include "fp8_test_problem.hpp"
#include "xs/moe/reference/bf16.hpp"
#include "xs/kernels/moe/fp8.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::moe::test {
namespace {

namespace km = xs::kernels::moe;

[[maybe_unused]] auto* const kEnv = ::testing::AddGlobalTestEnvironment(new xs::test::Sm90Environment);

// Runs the reference with its scratch kept for inspection.
DeviceBuffer run_reference(km::MoeReferenceArgs a) {
  DeviceBuffer scratch(a.act_scratch_bytes_needed());
  a.act_scratch = scratch.get();
  a.act_scratch_bytes = scratch.bytes();
  km::launch_moe_reference(a, nullptr);
  XS_CUDA_CHECK(cudaDeviceSynchronize());
  return scratch;
}

// GPU fp32 vs CPU float64, both on the same e4m3 codes and scales. They differ by (1) the bf16 rounding of
// the GPU output, at most 2^-9 relative; (2) fp32 accumulation and expf, ~1e-6 of sum_j |act_j w2[c][j]|
// (l1 below); (3) an act element whose fp32 a / s lies on the other side of an e4m3 rounding boundary than
// the float64 one (about 1e-6 of the elements): a one-code flip moves deq(act_j) by at most |act_j| / 8
// + s 2^-9 (the subnormal step), so output c by that times |w2[c][j]|. Tolerance: 2^-8 |ref| + two flips
// + 2^-14 l1 + 1e-6. Index or scale bugs move outputs by O(their rms). The relative difference over all
// elements is ~1e-6 from the bf16 rounding alone; bound 1e-5.
constexpr double kRelTol = 1.0 / 256;
constexpr double kL1Tol = 1.0 / 16384;
constexpr double kAbsTol = 1e-6;
constexpr double kMaxRelativeDifference = 1e-5;

class GpuMoeReferenceFp8 : public ::testing::TestWithParam<Fp8Shape> {};

TEST_P(GpuMoeReferenceFp8, MatchesTheFloat64Fp8Reference) {
  const Fp8Shape sh = GetParam();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Fp8Problem p(sh, seed);
  const MoeProblem& pr = p.problem;
  ASSERT_GT(pr.num_received_pairs, 0u);
  const DeviceRouting routing(p.routing_view());
  CombineDestinations dst(sh.num_ranks, sh.tokens_per_rank, sh.top_k, sh.hidden);
  dst.poison(nullptr);
  km::MoeReferenceArgs a = p.reference_args(routing, true);
  dst.fill_args(a);
  const DeviceBuffer scratch = run_reference(a);
  const Fp8Operands ops = p.host_operands();
  const MoeReferenceFp8 cpu = cpu_moe_reference_fp8(pr, ops);

  // Act: codes equal except rare one-step flips, scales equal to fp32 rounding.
  const int h = sh.hidden, inter = sh.intermediate, groups = inter / kActGroupCols;
  const std::uint64_t rows = pr.num_pool_rows();
  const auto bytes = runtime::download<std::uint8_t>(scratch);
  const std::uint8_t* gpu_codes = bytes.data();
  const auto* gpu_scales = reinterpret_cast<const float*>(bytes.data() + a.act_scale_offset_bytes());
  std::size_t act_elements = 0, flips = 0;
  for (std::uint64_t r = 0; r < rows; ++r) {
    if (pr.pool_arrival[r] < 0) continue;
    for (int g = 0; g < groups; ++g) {
      const float gs = gpu_scales[g * rows + r], cs = cpu.act_scale[g * rows + r];
      ASSERT_LE(std::fabs(gs - cs), 1e-5f * cs) << "act scale row " << r << " group " << g;
    }
    for (int j = 0; j < inter; ++j) {
      const std::uint8_t gc = gpu_codes[r * inter + j], cc = cpu.act_e4m3[r * inter + j];
      ++act_elements;
      if (gc == cc) continue;
      ++flips;
      const double gv = km::e4m3_to_float(gc), cv = km::e4m3_to_float(cc);
      const bool neighbours = (gc & 0x80) == (cc & 0x80) ? std::abs(int(gc) - int(cc)) == 1 : gv == 0 && cv == 0;
      EXPECT_TRUE(neighbours || std::fabs(gv - cv) <= 0x1p-9) << "act row " << r << " col " << j << ": gpu code "
                                                               << int(gc) << " cpu code " << int(cc);
    }
  }
  EXPECT_LE(flips, 2 + act_elements / 10000) << flips << " act codes of " << act_elements << " differ";

  // Combine rows.
  const std::vector<double> w2 = dequantize_blocks_fp8(ops.w2, pr.num_local_experts, h, inter);
  std::vector<double> gpu_values, cpu_values;
  std::size_t wrong = 0, bitwise = 0, unwritten = 0, unexpected = 0;
  double worst = -1;
  std::string worst_at;
  std::vector<std::vector<std::uint16_t>> got(sh.num_ranks);
  for (int k = 0; k < sh.num_ranks; ++k) got[k] = dst.download(k);
  std::vector<double> act(inter);
  for (std::uint64_t r = 0; r < rows; ++r) {
    if (pr.pool_arrival[r] < 0) continue;
    const std::size_t e = pr.row_block_expert[r / kPoolBlockRows];
    for (int j = 0; j < inter; ++j)
      act[j] = double(km::e4m3_to_float(cpu.act_e4m3[r * inter + j])) * cpu.act_scale[(j / kActGroupCols) * rows + r];
    const int rank = pr.pool_dst_rank[r];
    const std::size_t base = std::size_t(pr.pool_dst_slot[r]) * h;
    for (int c = 0; c < h; ++c) {
      const double want = cpu.combine[rank][base + c];
      const std::uint16_t bits = got[rank][base + c];
      if (bits == km::kPoisonBits) {
        ++unwritten;
        continue;
      }
      double flip = 0, l1 = 0;
      for (int j = 0; j < inter; ++j) {
        const double w = std::fabs(w2[(e * h + c) * inter + j]);
        const float s = cpu.act_scale[(j / kActGroupCols) * rows + r];
        flip = std::max(flip, (std::fabs(act[j]) / 8 + s * 0x1p-9) * w);
        l1 += std::fabs(act[j]) * w;
      }
      const double g = bf16_to_double(bits);
      const double excess = std::fabs(g - want) / (kRelTol * std::fabs(want) + 2 * flip + kL1Tol * l1 + kAbsTol);
      wrong += !(excess <= 1.0);
      bitwise += bits == cpu.combine_bf16[rank][base + c];
      gpu_values.push_back(g);
      cpu_values.push_back(want);
      if (!(excess <= worst)) {
        worst = excess;
        worst_at = "row " + std::to_string(r) + " col " + std::to_string(c) + ": gpu " + std::to_string(g) +
                   " cpu " + std::to_string(want);
      }
    }
  }
  for (int k = 0; k < sh.num_ranks; ++k)
    for (std::size_t i = 0; i < got[k].size(); ++i)
      unexpected += std::isnan(cpu.combine[k][i]) && got[k][i] != km::kPoisonBits;
  const std::size_t expected = pr.num_received_pairs * std::size_t(h);
  EXPECT_EQ(unwritten, 0u);
  EXPECT_EQ(unexpected, 0u);
  EXPECT_EQ(gpu_values.size(), expected);
  EXPECT_EQ(wrong, 0u) << "worst (excess " << worst << ") " << worst_at;
  EXPECT_GE(double(bitwise), 0.95 * double(expected)) << bitwise << " of " << expected << " bitwise equal";
  const double diff = relative_difference(gpu_values, cpu_values);
  double sum2 = 0;
  for (double v : cpu_values) sum2 += v * v;
  const double rms = std::sqrt(sum2 / double(std::max<std::size_t>(cpu_values.size(), 1)));
  EXPECT_GT(rms, 0.05) << "inputs too small to test anything";
  EXPECT_LT(diff, kMaxRelativeDifference);
  std::printf("pairs %llu, act flips %zu of %zu, output rms %.3f, bitwise share %.4f, relative difference %.3e, "
              "worst excess %.3f at %s\n",
              static_cast<unsigned long long>(pr.num_received_pairs), flips, act_elements, rms,
              double(bitwise) / double(std::max<std::size_t>(expected, 1)), diff, worst, worst_at.c_str());

  // The device measure on the same data: CPU bf16 rows as the reference destinations.
  CombineDestinations cpu_dst(sh.num_ranks, sh.tokens_per_rank, sh.top_k, sh.hidden);
  for (int k = 0; k < sh.num_ranks; ++k)
    runtime::copy_to_device(cpu_dst.ranks[k].get(), cpu.combine_bf16[k].data(), cpu_dst.bytes_per_rank());
  const DeviceBuffer mask = build_slot_mask(routing, sh.num_ranks, std::uint32_t(sh.tokens_per_rank * sh.top_k), 0, -1,
                                            nullptr);
  CombineCheckSpec spec;
  spec.test = &dst;
  spec.ref = &cpu_dst;
  spec.slot_mask = &mask;
  spec.abs_tol = 5e-2f;  // ~10 act flips' worth (output rms ~0.25): the elementwise check is the one above
  spec.rel_tol = 1e-1f;
  const CombineCheck check = compare_combine(spec, nullptr);
  EXPECT_TRUE(check.clean()) << check.summary();
  std::vector<double> cpu_bf16_values;
  for (std::uint64_t r = 0; r < rows; ++r)
    if (pr.pool_arrival[r] >= 0)
      for (int c = 0; c < h; ++c)
        cpu_bf16_values.push_back(bf16_to_double(cpu.combine_bf16[pr.pool_dst_rank[r]][pr.pool_dst_slot[r] * h + c]));
  EXPECT_NEAR(check.counts.relative_difference, relative_difference(gpu_values, cpu_bf16_values), 1e-12);
  EXPECT_LT(check.counts.relative_difference, kMaxRelativeDifference);
}

INSTANTIATE_TEST_SUITE_P(Small, GpuMoeReferenceFp8,
                         ::testing::Values(Fp8Shape{},  // h 256, I 128, 4 local experts, top-4, P 4
                                           Fp8Shape{512, 256, 2, 96, 8, 3, 1.0}));

// The fp8 path against the bf16 path on the unquantized inputs: quantization error only (four e4m3
// operands with ~2.5% rms relative rounding each: a relative difference of a few 1e-3; the float64 host
// test measures ~2e-3), and not zero (the quantized operands were used).
TEST(MoeReferenceFp8Bf16, DiffersFromTheBf16PathByQuantizationErrorOnly) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Fp8Shape sh;
  const Fp8Problem p(sh, seed);
  const DeviceRouting routing(p.routing_view());
  CombineDestinations fp8(sh.num_ranks, sh.tokens_per_rank, sh.top_k, sh.hidden);
  CombineDestinations bf16(sh.num_ranks, sh.tokens_per_rank, sh.top_k, sh.hidden);
  fp8.poison(nullptr);
  bf16.poison(nullptr);
  km::MoeReferenceArgs a = p.reference_args(routing, true);
  fp8.fill_args(a);
  run_moe_reference(a, nullptr);
  km::MoeReferenceArgs b = p.reference_args(routing, false);
  bf16.fill_args(b);
  run_moe_reference(b, nullptr);
  const DeviceBuffer mask = build_slot_mask(routing, sh.num_ranks, std::uint32_t(sh.tokens_per_rank * sh.top_k), 0, -1,
                                            nullptr);
  CombineCheckSpec spec;
  spec.test = &fp8;
  spec.ref = &bf16;
  spec.slot_mask = &mask;
  spec.abs_tol = 0.5f;  // elementwise: only unwritten / unexpected slots matter here
  spec.rel_tol = 0.5f;
  const CombineCheck c = compare_combine(spec, nullptr);
  std::printf("fp8 vs bf16 GPU reference: relative difference %.3e over %llu elements\n", c.counts.relative_difference,
              static_cast<unsigned long long>(c.counts.compared_elements));
  EXPECT_EQ(c.counts.compared_elements, p.problem.num_received_pairs * std::uint64_t(sh.hidden));
  EXPECT_EQ(c.counts.unwritten_slots + c.counts.unexpected_slots, 0u) << c.summary();
  EXPECT_LT(c.counts.relative_difference, 1e-2);
  EXPECT_GT(c.counts.relative_difference, 1e-5);
}

// A row range computes exactly those rows (bitwise as in the full run: the act scale layout follows the
// range's row count) and writes nothing else.
TEST(MoeReferenceFp8Rows, RangeWritesOnlyItsRowsBitwiseAsFullRun) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Fp8Shape sh;
  const Fp8Problem p(sh, seed);
  const MoeProblem& pr = p.problem;
  const DeviceRouting routing(p.routing_view());
  CombineDestinations full(sh.num_ranks, sh.tokens_per_rank, sh.top_k, sh.hidden);
  CombineDestinations part(sh.num_ranks, sh.tokens_per_rank, sh.top_k, sh.hidden);
  full.poison(nullptr);
  part.poison(nullptr);
  km::MoeReferenceArgs a = p.reference_args(routing, true);
  full.fill_args(a);
  run_moe_reference(a, nullptr);
  const int row_begin = 37, row_end = std::min(int(pr.num_pool_rows()), 201);  // unaligned to 64-row tiles
  a.row_begin = row_begin;
  a.row_end = row_end;
  part.fill_args(a);
  run_moe_reference(a, nullptr);
  int in_range = 0;
  std::vector<std::vector<std::uint16_t>> f, q;
  for (int k = 0; k < sh.num_ranks; ++k) {
    f.push_back(full.download(k));
    q.push_back(part.download(k));
  }
  for (int r = 0; r < int(pr.num_pool_rows()); ++r) {
    if (pr.pool_arrival[r] < 0) continue;
    const bool inside = r >= row_begin && r < row_end;
    in_range += inside;
    const std::size_t base = std::size_t(pr.pool_dst_slot[r]) * sh.hidden;
    for (int c = 0; c < sh.hidden; ++c) {
      const std::uint16_t pv = q[pr.pool_dst_rank[r]][base + c], fv = f[pr.pool_dst_rank[r]][base + c];
      if (inside)
        ASSERT_EQ(pv, fv) << "pool row " << r << " col " << c;
      else
        ASSERT_EQ(pv, km::kPoisonBits) << "pool row " << r << " outside the range was written";
    }
  }
  EXPECT_GT(in_range, 0);
}

TEST(MoeReferenceFp8Args, RejectsShapesAndScalesTheFp8PathCannotRun) {
  const Fp8Shape sh;
  const Fp8Problem p(sh, 1);
  const DeviceRouting routing(p.routing_view());
  CombineDestinations dst(sh.num_ranks, sh.tokens_per_rank, sh.top_k, sh.hidden);
  km::MoeReferenceArgs a = p.reference_args(routing, true);
  dst.fill_args(a);
  DeviceBuffer scratch(a.act_scratch_bytes_needed());
  a.act_scratch = scratch.get();
  a.act_scratch_bytes = scratch.bytes();
  EXPECT_NO_THROW(km::validate_moe_reference(a));
  const auto field_of = [](const km::MoeReferenceArgs& x) {
    try {
      km::validate_moe_reference(x);
    } catch (const Error& e) {
      return e.field();
    }
    return std::string("(no error)");
  };
  km::MoeReferenceArgs b = a;
  b.hidden = 192;  // a multiple of 64 (bf16 accepts it), not of 128
  EXPECT_EQ(field_of(b), "hidden");
  b = a;
  b.w1_scale = nullptr;
  EXPECT_EQ(field_of(b), "arrival_scale/w1_scale/w2_scale");
  b = a;
  b.act_scratch_bytes = a.act_scratch_bytes_needed() - 1;
  EXPECT_EQ(field_of(b), "act_scratch");
  b = a;
  b.precision = static_cast<km::Precision>(7);
  EXPECT_EQ(field_of(b), "precision");
  b = a;
  b.precision = km::Precision::kBf16;  // bf16 needs less scratch: 2 bytes per act element
  EXPECT_LT(b.act_scratch_bytes_needed(), a.act_scratch_bytes_needed());
}

// compare_combine's sums on planted data: test = ref on half of the expected slots, -ref on the others,
// one expected element left poisoned (not compared, not summed), slots no row targets poisoned.
TEST(CompareCombineRelativeDifference, SumsAndMeasureOnPlantedData) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Fp8Shape sh;
  const Fp8Problem p(sh, seed);
  const MoeProblem& pr = p.problem;
  const DeviceRouting routing(p.routing_view());
  CombineDestinations ref(sh.num_ranks, sh.tokens_per_rank, sh.top_k, sh.hidden);
  CombineDestinations test(sh.num_ranks, sh.tokens_per_rank, sh.top_k, sh.hidden);
  for (int k = 0; k < sh.num_ranks; ++k)
    km::launch_fill_uniform_bf16(ref.ranks[k].get(), ref.bytes_per_rank() / 2, seed + 17 * k, 3.0f, nullptr);
  XS_CUDA_CHECK(cudaDeviceSynchronize());
  const ExpectedSlots expected = expected_written_slots(pr);
  double xy = 0, xx = 0, yy = 0;
  std::uint64_t compared = 0;
  bool poisoned_one = false;
  for (int k = 0; k < sh.num_ranks; ++k) {
    const std::vector<std::uint16_t> r = ref.download(k);
    std::vector<std::uint16_t> t(r.size(), km::kPoisonBits);
    for (int slot = 0; slot < pr.slots_per_rank(); ++slot) {
      if (!expected.is_written(k, slot)) continue;
      for (int c = 0; c < sh.hidden; ++c) {
        const std::size_t i = std::size_t(slot) * sh.hidden + c;
        if (!poisoned_one) {
          poisoned_one = true;  // stays poisoned
          continue;
        }
        t[i] = slot % 2 == 0 ? r[i] : static_cast<std::uint16_t>(r[i] ^ 0x8000u);  // bf16 negation is exact
        const double tv = bf16_to_double(t[i]), rv = bf16_to_double(r[i]);
        xy += tv * rv;
        xx += tv * tv;
        yy += rv * rv;
        ++compared;
      }
    }
    runtime::copy_to_device(test.ranks[k].get(), t.data(), test.bytes_per_rank());
  }
  ASSERT_TRUE(poisoned_one);
  const DeviceBuffer mask = build_slot_mask(routing, sh.num_ranks, std::uint32_t(sh.tokens_per_rank * sh.top_k), 0, -1,
                                            nullptr);
  CombineCheckSpec spec;
  spec.test = &test;
  spec.ref = &ref;
  spec.slot_mask = &mask;
  spec.abs_tol = 1e-3f;
  spec.rel_tol = 1e-3f;
  const CombineCheck c = compare_combine(spec, nullptr);
  EXPECT_EQ(c.counts.compared_elements, compared);
  EXPECT_EQ(c.counts.unwritten_slots, 1u);
  EXPECT_NEAR(c.counts.sum_test_ref, xy, 1e-9 * xx);
  EXPECT_NEAR(c.counts.sum_test_sq, xx, 1e-9 * xx);
  EXPECT_NEAR(c.counts.sum_ref_sq, yy, 1e-9 * yy);
  const double want = 1.0 - 2.0 * xy / (xx + yy);
  EXPECT_NEAR(c.counts.relative_difference, want, 1e-9);
  EXPECT_GT(want, 0.5);  // about half the elements negated: ~1
  EXPECT_LT(want, 1.5);
  std::printf("planted: relative difference %.6f (host %.6f) over %llu elements\n", c.counts.relative_difference, want,
              static_cast<unsigned long long>(compared));

  // An identical copy: the measure is 0 up to summation order.
  for (int k = 0; k < sh.num_ranks; ++k)
    XS_CUDA_CHECK(cudaMemcpy(test.ranks[k].get(), ref.ranks[k].get(), ref.bytes_per_rank(), cudaMemcpyDeviceToDevice));
  const CombineCheck same = compare_combine(spec, nullptr);
  EXPECT_LT(std::fabs(same.counts.relative_difference), 1e-12);
  EXPECT_GT(same.counts.sum_ref_sq, 0.0);
}

}  // namespace
}  // namespace xs::moe::test
