// xstage GPU attention tests: the multi-rank exchange path of the fa_a2a runner (fa_runner.hpp FaExchange) on
// one GPU. A one-rank exchange over a plain device buffer (the all-to-all a device copy) checks the runner's
// own side: stores at this sender's block of every window, the receive-side check, the collective variants,
// the per-replay barrier. A one-rank NCCL window (backends/nccl/rank_windows.hpp) runs where NCCL gives a one-rank
// communicator symmetric memory (>= 2.28.7), else skips with NCCL's reason.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <atomic>

#include "../gpu_common/sm90_environment.hpp"
#include "xs/attention/run/fa_runner.hpp"
#include "xs/bench/rank_comm.hpp"
#include "xs/common/error.hpp"
#include "xs/backends/cuda/device_buffer.hpp"
#include "xs/backends/nccl/rank_windows.hpp"

namespace xs::attention {
namespace {

using runtime::DeviceBuffer;

[[maybe_unused]] auto* const kEnv = ::testing::AddGlobalTestEnvironment(new xs::test::Sm90Environment);

FaA2aPointSpec one_rank_spec() {
  FaA2aPointSpec spec;
  spec.seq_len = 2048;
  spec.num_heads = 4;
  spec.num_ranks = 1;
  spec.target = "nccl:0";
  spec.repetitions = 3;
  spec.launches_per_graph = 2;
  return spec;
}

std::size_t window_bytes_of(const FaA2aPointSpec& s) {
  return std::size_t{2} * s.seq_len * s.num_heads * s.head_dim;
}

TEST(FaExchangePath, OneRankOverADeviceBufferVerifiesTimesAndMeetsAtEveryReplay) {
  FaA2aPointSpec spec = one_rank_spec();
  DeviceBuffer window(window_bytes_of(spec));
  std::atomic<int> barriers{0};
  auto ex = std::make_shared<FaExchange>();
  ex->world_rank = 0;
  ex->peer_windows = {window.get()};
  ex->own_window = window.get();
  ex->window_bytes = window.bytes();
  ex->barrier = [&barriers] { ++barriers; };
  ex->alltoall = [](const void* send, void* recv, std::size_t bytes, void* stream) {
    ASSERT_EQ(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)),
              cudaSuccess);
  };
  ex->description = "one rank over a device buffer (test)";
  spec.exchange = ex;
  const FaA2aPointResult r = run_fa_a2a_point(spec);
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.verified) << r.error_detail;
  EXPECT_EQ(r.wrong_fused + r.wrong_cc + r.wrong_serial + r.unwritten_local, 0u) << r.error_detail;
  EXPECT_EQ(r.destinations, ex->description);
  EXPECT_EQ(r.remote_bytes, 0.0);  // P = 1: nothing leaves the rank
  EXPECT_GT(r.t_a2a.median, 0);
  EXPECT_EQ(r.t_a2a_bulk.samples.size(), 0u);  // no bulk copy across ranks
  // 3 verification runs x 3 barriers, then one per replay: (2 warm-up + 3 timed) rounds x 6 variants, FA-only
  // timed alone (fa_runner.cpp: 5 warm-up + max(20, repetitions) replays of the one variant), and per
  // sender-side round 4 variants x 5 rounds.
  EXPECT_EQ(barriers.load(), 3 * 3 + 5 * 6 + (5 + 20) + 5 * 4);
}

TEST(FaExchangePath, AnExchangeThatDoesNotFitThePointIsAnInputError) {
  FaA2aPointSpec spec = one_rank_spec();
  DeviceBuffer window(window_bytes_of(spec));
  auto ex = std::make_shared<FaExchange>();
  ex->peer_windows = {window.get(), window.get()};  // two ranks, but P = 1
  ex->own_window = window.get();
  ex->window_bytes = window.bytes();
  ex->barrier = [] {};
  ex->alltoall = [](const void*, void*, std::size_t, void*) {};
  spec.exchange = ex;
  try {
    (void)run_fa_a2a_point(spec);
    FAIL() << "accepted an exchange over 2 ranks for P = 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
  }
  ex->peer_windows = {window.get()};
  ex->window_bytes = window.bytes() / 2;  // too small for P x the slice
  try {
    (void)run_fa_a2a_point(spec);
    FAIL() << "accepted a window smaller than the point's P slices";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
  }
}

TEST(FaExchangePath, OneRankNcclWindowVerifiesOrSaysWhyNot) {
  FaA2aPointSpec spec = one_rank_spec();
  bench::SingleRankComm comm;
  std::unique_ptr<runtime::RankWindows> windows;
  try {
    windows = runtime::RankWindows::create(comm, 0, window_bytes_of(spec));
  } catch (const Error& e) {
    ASSERT_EQ(e.code(), ExitCode::kBadInput) << e.what();
    GTEST_SKIP() << "no one-rank NCCL window here: " << e.what();
  }
  spec.exchange = fa_exchange_over(*windows, comm);
  const FaA2aPointResult r = run_fa_a2a_point(spec);
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.verified) << r.error_detail;
  EXPECT_EQ(r.wrong_fused + r.wrong_cc + r.wrong_serial, 0u) << r.error_detail;
  EXPECT_GT(r.t_a2a.median, 0);
}

}  // namespace
}  // namespace xs::attention
