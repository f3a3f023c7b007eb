// xstage GPU attention tests: one small fa_a2a point end to end (all variants verified and timed, both
// boundaries, burst alignment), the skip path for a peer target on a one-GPU machine, the peer All-to-All
// and --device on a multi-GPU one.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include "xs/attention/run/fa_runner.hpp"
#include "xs/common/error.hpp"

namespace xs::attention {
namespace {

TEST(FaA2aPoint, LocalTargetVerifiesAndTimes) {
  FaA2aPointSpec spec;
  spec.seq_len = 2048;
  spec.num_heads = 4;
  spec.num_ranks = 8;
  spec.repetitions = 3;
  spec.launches_per_graph = 2;
  const FaA2aPointResult r = run_fa_a2a_point(spec);
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.verified) << r.error_detail;
  EXPECT_LE(r.rel_error, 1e-2);
  EXPECT_EQ(r.wrong_fused + r.wrong_cc + r.wrong_serial + r.unwritten_local, 0u) << r.error_detail;
  // FA-only is layout-matched (rank slices, verified against the reference after a gather) and the
  // heads-major extra computes the same bits.
  EXPECT_EQ(r.fa_only_layout, "ulysses");
  EXPECT_EQ(r.wrong_heads_major, 0u) << r.error_detail;
  EXPECT_GT(r.t_fa_heads_major.median, 0);
  EXPECT_GT(r.t_fa.median, 0);
  EXPECT_GT(r.t_fused.median, 0);
  EXPECT_GT(r.t_cc.median, 0);
  EXPECT_GT(r.t_serial.median, 0);
  EXPECT_GT(r.sigma_s_per_kv_tile, 0);
  EXPECT_GT(r.store_span_fused.median, 0);
  // Sender-side boundary: one value per kept round of every variant, paired differences per round.
  for (const Summary* t : {&r.sender_fa, &r.sender_fused, &r.sender_cc, &r.sender_serial}) {
    EXPECT_EQ(t->samples.size(), 3u);
    EXPECT_GT(t->median, 0);
  }
  EXPECT_EQ(r.e_res_sender_paired.samples.size(), 3u);
  EXPECT_EQ(r.e_cc_sender_paired.samples.size(), 3u);
  // Burst alignment: at least one CTA stores at a time, never more than the grid; the mean is at most the peak.
  EXPECT_GE(r.peak_concurrent_storers, 1);
  EXPECT_LE(r.peak_concurrent_storers, r.num_ctas);
  EXPECT_GE(r.mean_concurrent_storers, 1);
  EXPECT_LE(r.mean_concurrent_storers, r.peak_concurrent_storers);
  EXPECT_GE(r.store_phase_spread_median_s, 0);
}

TEST(FaA2aPoint, HeadDim64VerifiesAndTimes) {
  FaA2aPointSpec spec;
  spec.seq_len = 2048;
  spec.num_heads = 4;
  spec.head_dim = 64;
  spec.repetitions = 2;
  spec.launches_per_graph = 2;
  const FaA2aPointResult r = run_fa_a2a_point(spec);
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.verified) << r.error_detail;
  EXPECT_EQ(r.wrong_fused + r.wrong_cc + r.wrong_serial + r.unwritten_local + r.wrong_heads_major, 0u)
      << r.error_detail;
  EXPECT_DOUBLE_EQ(r.volume_bytes, 4.0 * 2048 * 64 * 2);
  EXPECT_GT(r.t_fa.median, 0);
}

TEST(FaA2aPoint, HostTargetVerifies) {
  FaA2aPointSpec spec;
  spec.seq_len = 1024;
  spec.num_heads = 2;
  spec.target = "host";
  spec.repetitions = 2;
  spec.launches_per_graph = 1;
  const FaA2aPointResult r = run_fa_a2a_point(spec);
  if (r.status == "skipped") GTEST_SKIP() << r.reason;
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.verified) << r.error_detail;
}

TEST(FaA2aPoint, PeerOnOneGpuIsSkippedWithReason) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  if (count > 1) GTEST_SKIP() << "more than one GPU";
  FaA2aPointSpec spec;
  spec.target = "peer:1";
  const FaA2aPointResult r = run_fa_a2a_point(spec);
  EXPECT_EQ(r.status, "skipped");
  EXPECT_EQ(r.reason, "unavailable: one GPU");
}

TEST(FaA2aPoint, PeerIsAnAllToAllOverTheOtherRanksGpus) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  if (count < 2) GTEST_SKIP() << "one GPU";
  FaA2aPointSpec spec;
  spec.seq_len = 1024;
  spec.num_heads = 2;
  spec.num_ranks = 2;  // rank 0 on GPU 0 (the sender, its slice local), rank 1 on GPU 1
  spec.target = "peer:1";
  spec.repetitions = 2;
  spec.launches_per_graph = 1;
  const FaA2aPointResult r = run_fa_a2a_point(spec);
  if (r.status == "skipped") GTEST_SKIP() << r.reason;
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.verified) << r.error_detail;
  EXPECT_DOUBLE_EQ(r.remote_bytes, r.volume_bytes / 2) << "only the other rank's slice leaves the GPU";
  EXPECT_TRUE(r.t_a2a_bulk.samples.empty()) << "no single destination for a bulk copy";
}

TEST(FaA2aPoint, HonoursTheDevice) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  FaA2aPointSpec spec;
  spec.seq_len = 1024;
  spec.num_heads = 2;
  spec.repetitions = 2;
  spec.launches_per_graph = 1;
  spec.device = count;  // one past the last GPU: input error, not a silent GPU 0
  EXPECT_THROW(run_fa_a2a_point(spec), Error);
  if (count < 2) GTEST_SKIP() << "one GPU";
  spec.device = count - 1;
  int before = -1;
  ASSERT_EQ(cudaGetDevice(&before), cudaSuccess);
  const FaA2aPointResult r = run_fa_a2a_point(spec);
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.verified) << r.error_detail;
  int after = -1;
  ASSERT_EQ(cudaGetDevice(&after), cudaSuccess);
  EXPECT_EQ(after, before) << "the runner restores the current device";
}

}  // namespace
}  // namespace xs::attention
