// xstage GPU moe tests: the fp8 W8A8 MegaMoE kernel against the float64 CPU fp8 reference (an implementation
// independent of the fp32 GPU reference the runner verifies with), on three shapes and two schedules, with
// pool, act, their scales and the destinations poisoned before every launch; judged by the runner's rule
// (verification_gate.hpp: RMS-scaled elementwise bound and the relative difference).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "../gpu_common/sm90_environment.hpp"
#include "xs/common/error.hpp"
#include "fp8_test_problem.hpp"
#include "xs/kernels/moe/megamoe.hpp"
#include "xs/moe/reference/verification_gate.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::moe::test {
namespace {

namespace km = xs::kernels::moe;

[[maybe_unused]] auto* const kEnv = ::testing::AddGlobalTestEnvironment(new xs::test::Sm90Environment);

class MegaMoeFp8Kernel : public ::testing::TestWithParam<Fp8Shape> {};

TEST_P(MegaMoeFp8Kernel, MatchesTheFloat64Fp8Reference) {
  const Fp8Shape sh = GetParam();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Fp8Problem p(sh, seed);
  const MoeProblem& pr = p.problem;
  ASSERT_GT(pr.num_row_blocks, 0u);
  const DeviceRouting routing(p.routing_view());
  const std::uint64_t rows = pr.num_pool_rows();
  DeviceBuffer pool(rows * sh.hidden), act(rows * sh.intermediate);
  DeviceBuffer pool_scale(rows * (sh.hidden / 128) * 4), act_scale(rows * (sh.intermediate / 64) * 4);
  DeviceBuffer sync(km::SyncLayout{pr.num_row_blocks}.bytes());
  XS_CUDA_CHECK(cudaMemset(sync.get(), 0, sync.bytes()));
  CombineDestinations dst(sh.num_ranks, sh.tokens_per_rank, sh.top_k, sh.hidden);

  km::MegaMoeArgs a;
  a.hidden = sh.hidden;
  a.intermediate = sh.intermediate;
  a.num_experts = pr.num_local_experts;
  a.top_k = sh.top_k;
  a.tokens_per_rank = sh.tokens_per_rank;
  a.num_ranks = sh.num_ranks;
  a.num_row_blocks = static_cast<int>(pr.num_row_blocks);
  a.num_arrivals = pr.num_arrivals();
  a.block_n = 128;
  a.precision = km::Precision::kFp8;
  a.arrival = p.arrival.codes.get();
  a.arrival_scale = p.arrival.scales.as<const float>();
  a.w1 = p.w1.codes.get();
  a.w1_scale = p.w1.scales.as<const float>();
  a.w2 = p.w2.codes.get();
  a.w2_scale = p.w2.scales.as<const float>();
  a.pool = pool.get();
  a.pool_scale = pool_scale.as<float>();
  a.act = act.get();
  a.act_scale = act_scale.as<float>();
  a.routing = routing.tables();
  a.sync_words = sync.as<std::uint32_t>();
  a.sync_bytes = sync.bytes();
  dst.fill_args(a);

  // The reference, its writer count per slot, all ranks concatenated.
  const MoeReferenceFp8 cpu = cpu_moe_reference_fp8(pr, p.host_operands());
  std::vector<std::uint16_t> ref;
  std::vector<std::uint32_t> writers(std::size_t(sh.num_ranks) * sh.tokens_per_rank * sh.top_k, 0);
  for (int k = 0; k < sh.num_ranks; ++k) ref.insert(ref.end(), cpu.combine_bf16[k].begin(), cpu.combine_bf16[k].end());
  for (std::uint64_t r = 0; r < rows; ++r)
    if (pr.pool_arrival[r] >= 0)
      ++writers[std::size_t(pr.pool_dst_rank[r]) * sh.tokens_per_rank * sh.top_k + pr.pool_dst_slot[r]];
  const double rms = reference_rms_host(ref, writers, sh.hidden);
  ASSERT_GT(rms, 0.05) << "inputs too small to test anything";
  const CombineTolerance tol = combine_tolerance("fp8", rms);

  km::MegaMoeConfig config;
  config.num_ctas = 16;
  config.timeout_cycles = 1ull << 32;
  for (km::ScheduleChoice sched : {km::ScheduleChoice{km::ScheduleKind::kInterleaved, 1, 1},
                                   km::ScheduleChoice{km::ScheduleKind::kExpertWave, 2, 1}}) {
    SCOPED_TRACE(km::schedule_kind_name(sched.kind));
    for (DeviceBuffer* b : {&pool, &act, &pool_scale, &act_scale})
      km::launch_fill_bits16(b->get(), b->bytes() / 2, 0xFFFF, nullptr);
    dst.poison(nullptr);
    a.schedule = sched;
    km::launch_megamoe(config, a, nullptr);
    const cudaError_t err = cudaDeviceSynchronize();
    ASSERT_EQ(err, cudaSuccess) << cudaGetErrorString(err) << " " << km::megamoe_timeout_message();
    std::vector<std::uint16_t> got;
    for (int k = 0; k < sh.num_ranks; ++k) {
      const auto rank_rows = dst.download(k);
      got.insert(got.end(), rank_rows.begin(), rank_rows.end());
    }
    const CombineCounts c = compare_combine_host(got, ref, writers, sh.hidden, tol, km::kPoisonBits);
    const CombineVerdict v = judge_combine(c, tol);
    std::printf("fp8 kernel vs float64 reference (h %d, I %d): compared %llu, wrong %llu, relative difference %.3e\n",
                sh.hidden, sh.intermediate, static_cast<unsigned long long>(c.compared_elements),
                static_cast<unsigned long long>(c.wrong_elements), c.relative_difference);
    EXPECT_TRUE(v.passed) << v.reason;
    EXPECT_EQ(c.compared_elements, pr.num_received_pairs * std::uint64_t(sh.hidden));
  }
}

INSTANTIATE_TEST_SUITE_P(ThreeShapes, MegaMoeFp8Kernel,
                         ::testing::Values(Fp8Shape{},  // h 256, I 128, P 4, T 64, 16 experts, top-4
                                           Fp8Shape{512, 256, 2, 96, 8, 3, 1.0},
                                           Fp8Shape{1024, 512, 8, 128, 32, 4, 0.5}));

}  // namespace
}  // namespace xs::moe::test
