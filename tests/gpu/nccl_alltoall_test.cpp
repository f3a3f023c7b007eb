// xstage GPU tests: the NCCL all-to-all reference on a one-rank communicator (a copy of fresh random bytes,
// verified) and, where a second GPU exists, on two ranks in one process.
#if defined(XS_HAVE_CUDA) && defined(XS_HAVE_NCCL)
#include <cstdio>

#include <gtest/gtest.h>

#include "xs/common/error.hpp"
#include "xs/backends/cuda/device_buffer.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/nccl/nccl_alltoall.hpp"

namespace xs::runtime {
namespace {

void expect_reference(const NcclAlltoallReference& ref, const NcclAlltoallOptions& o, int num_ranks) {
  EXPECT_TRUE(ref.verified) << ref.verification_error;
  EXPECT_EQ(ref.num_ranks, num_ranks);
  EXPECT_EQ(ref.bytes_per_peer, o.bytes_per_peer);
  ASSERT_EQ(ref.time_s.size(), static_cast<std::size_t>(o.timed_iterations));
  for (double t : ref.time_s) EXPECT_GT(t, 0.0);
  EXPECT_GT(ref.median_time_s, 0.0);
  EXPECT_DOUBLE_EQ(ref.algbw_bps, static_cast<double>(o.bytes_per_peer) * num_ranks / ref.median_time_s);
  EXPECT_GT(ref.nccl_version, 0);
  std::printf("%s over %d rank(s), %zu B per peer: median %.3g s, algbw %.3g B/s, busbw %.3g B/s\n",
              ref.method.c_str(), num_ranks, o.bytes_per_peer, ref.median_time_s, ref.algbw_bps, ref.busbw_bps);
}

TEST(NcclAlltoall, OneRankIsAVerifiedCopyOfRandomBytes) {
  auto comms = NcclCommGroup::init_all({0});
  NcclAlltoallOptions o;
  o.seed = fresh_seed();
  o.bytes_per_peer = (1 << 20) + 4 * (o.seed % 1000);  // not a round size
  o.warmup_iterations = 1;
  o.timed_iterations = 5;
  std::printf("seed %llu\n", static_cast<unsigned long long>(o.seed));
  const NcclAlltoallReference ref = nccl_alltoall_reference(*comms, o);
  expect_reference(ref, o, 1);
  EXPECT_EQ(ref.busbw_bps, 0.0);  // one rank moves nothing across a link
}

TEST(NcclAlltoall, BadOptionsAreInputErrorsBeforeAnyNcclCall) {
  auto comms = NcclCommGroup::init_all({0});
  NcclAlltoallOptions o;
  o.bytes_per_peer = 0;
  try {
    (void)nccl_alltoall_reference(*comms, o);
    ADD_FAILURE() << "0 bytes per peer accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
    EXPECT_EQ(e.field(), "bytes_per_peer") << e.what();
  }
}

TEST(NcclAlltoall, TwoRanksInOneProcessExchangeTheirBlocks) {
  if (count_devices() < 2) GTEST_SKIP() << "needs 2 GPUs";
  auto comms = NcclCommGroup::init_all({0, 1});
  NcclAlltoallOptions o;
  o.seed = fresh_seed();
  o.bytes_per_peer = 1 << 20;
  o.timed_iterations = 3;
  const NcclAlltoallReference ref = nccl_alltoall_reference(*comms, o);
  expect_reference(ref, o, 2);
  EXPECT_DOUBLE_EQ(ref.busbw_bps, ref.algbw_bps / 2);
}

}  // namespace
}  // namespace xs::runtime

#endif  // XS_HAVE_CUDA && XS_HAVE_NCCL
