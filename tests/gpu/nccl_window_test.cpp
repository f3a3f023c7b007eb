// xstage GPU tests: NCCL communicators, symmetric windows and the nccl:N target on what one GPU can test
// (a one-rank ncclCommInitAll), plus the two-rank path where a second GPU exists. The window is either made
// (then a kernel stores through the resolved pointer and the host reads the owner's buffer back) or reported
// unavailable with NCCL's reason, and nothing faults.
#if defined(XS_HAVE_CUDA) && defined(XS_HAVE_NCCL)
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "xs/common/error.hpp"
#include "xs/kernels/common/nccl_lsa_pointers.hpp"
#include "gpu_test_util.hpp"
#include "xs/backends/cuda/device_buffer.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/nccl/nccl_window.hpp"
#include "xs/backends/gpu/targets.hpp"

namespace xs::runtime {
namespace {

// No sticky or pending CUDA error on `device`: what a fault through a bad window handle would leave.
void expect_device_clean(int device) {
  DeviceGuard guard(device);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// Stores words through `store_ptr` from `device`, reads `owner_ptr` (the same memory as its owner sees it).
void store_and_check(int device, void* store_ptr, void* owner_ptr, std::size_t bytes, std::uint32_t seed) {
  const std::uint64_t num_words = bytes / 4;
  {
    DeviceGuard guard(device);
    ASSERT_EQ(kernels::launch_store_words({static_cast<std::uint32_t*>(store_ptr), num_words, seed}, nullptr),
              cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  std::vector<std::uint32_t> got(num_words);
  copy_to_host(got.data(), owner_ptr, bytes);
  for (std::uint64_t i = 0; i < num_words; ++i)
    ASSERT_EQ(got[i], kernels::store_words_value(seed, i)) << "word " << i << " of " << num_words;
}

void expect_nccl_reason(const std::string& reason) {
  std::printf("NCCL window unavailable here: %s\n", reason.c_str());
  EXPECT_EQ(reason.rfind("unavailable: ", 0), 0u) << reason;
  EXPECT_GT(reason.size(), std::string("unavailable: ").size() + 10) << reason;
  // NCCL 2.28.0-2.28.6: a one-rank communicator has no symmetric memory; the device communicator says so.
  const int v = nccl_runtime_version();
  if (v >= nccl_version_code(2, 28, 0) && v < nccl_version_code(2, 28, 7)) {
    EXPECT_NE(reason.find("ncclDevCommCreate"), std::string::npos) << reason;
  }
}

TEST(NcclCommGroup, InitAllWithDeviceZeroIsOneRank) {
  auto comms = NcclCommGroup::init_all({0});
  ASSERT_EQ(comms->num_local(), 1);
  EXPECT_EQ(comms->world_size(), 1);
  EXPECT_EQ(comms->member(0).device, 0);
  EXPECT_EQ(comms->member(0).world_rank, 0);
  EXPECT_NE(comms->member(0).comm, nullptr);
  EXPECT_EQ(comms->launch_model(), "ncclCommInitAll");
  std::printf("NCCL headers %s, library %s\n", nccl_version_text(nccl_header_version()).c_str(),
              nccl_version_text(nccl_runtime_version()).c_str());
}

TEST(NcclCommGroup, BadDeviceListsAreInputErrors) {
  const int gpus = count_devices();
  for (const std::vector<int>& bad : {std::vector<int>{}, std::vector<int>{0, 0}, std::vector<int>{gpus}}) {
    try {
      (void)NcclCommGroup::init_all(bad);
      ADD_FAILURE() << "init_all accepted a bad list of " << bad.size();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
      EXPECT_EQ(e.field(), "devices") << e.what();
    }
  }
}

// The one-process-per-GPU path (MPI) with a single rank: ncclCommInitRank from a fresh unique id, and the same
// window outcome as ncclCommInitAll gives. Bad ranks are refused before NCCL is called (no bootstrap hang).
TEST(NcclCommGroup, InitRankOfOneFromAUniqueIdMakesTheSameWindow) {
  const NcclUniqueIdBytes id = nccl_make_unique_id();
  try {
    (void)NcclCommGroup::init_rank(id, 2, 2, 0);
    ADD_FAILURE() << "rank 2 of 2 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "rank") << e.what();
  }
  auto comms = NcclCommGroup::init_rank(id, 1, 0, 0);
  ASSERT_EQ(comms->num_local(), 1);
  EXPECT_EQ(comms->world_size(), 1);
  EXPECT_EQ(comms->member(0).world_rank, 0);
  EXPECT_EQ(comms->launch_model(), "ncclCommInitRank");
  NcclWindowTarget::Outcome made = NcclWindowTarget::create(comms, 4096);
  if (!made.target) {
    expect_nccl_reason(made.unavailable_reason);
    expect_device_clean(0);
    return;
  }
  ASSERT_EQ(made.target->dst(0).size(), 1u);
  store_and_check(0, made.target->dst(0)[0], made.target->rank(0).local_ptr, 4096, 99u);
}

TEST(NcclWindow, OneRankWindowStoresThroughItsLsaPointerOrSaysWhyNot) {
  auto comms = NcclCommGroup::init_all({0});
  constexpr std::size_t kBytes = 1 << 20;
  NcclWindowTarget::Outcome made = NcclWindowTarget::create(comms, kBytes);
  if (!made.target) {
    expect_nccl_reason(made.unavailable_reason);
    expect_device_clean(0);
    return;
  }
  const NcclWindowTarget& t = *made.target;
  EXPECT_TRUE(made.unavailable_reason.empty());
  EXPECT_EQ(t.bytes_per_rank(), kBytes);
  ASSERT_EQ(t.num_local(), 1);
  EXPECT_EQ(t.rank(0).lsa.num_ranks, 1);
  ASSERT_EQ(t.dst(0).size(), 1u);
  ASSERT_NE(t.dst(0)[0], nullptr);
  store_and_check(0, t.dst(0)[0], t.rank(0).local_ptr, kBytes, 0x5eed1234u);
  expect_device_clean(0);
}

TEST(NcclWindow, BadArgumentsAreInputErrors) {
  auto comms = NcclCommGroup::init_all({0});
  try {
    (void)NcclWindowTarget::create(comms, 0);
    ADD_FAILURE() << "a 0-byte window was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "bytes") << e.what();
  }
  try {
    (void)NcclWindowTarget::create(nullptr, 4096);
    ADD_FAILURE() << "a null communicator was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "comm") << e.what();
  }
}

TEST(NcclTarget, SelfTargetReasonAgreesWithTheBufferAndStoresLand) {
  const Target target = parse_target("nccl:0");
  const DeviceInfo info = query_device(0);
  const auto reason = target_unavailable_reason(target, info, query_topology(count_devices()));
  expect_device_clean(0);
  if (reason) {
    expect_nccl_reason(*reason);
    // The probe's answer is remembered: asking again gives the same reason without a new communicator.
    EXPECT_EQ(target_unavailable_reason(target, info, query_topology(count_devices())), reason);
    return;
  }
  constexpr std::size_t kBytes = 256 << 10;
  TargetBuffer buffer(target, 0, kBytes);
  buffer.poison(kBytes);
  std::vector<std::uint32_t> scratch;
  EXPECT_EQ(buffer.host_words(kBytes, scratch)[0], 0xFFFFFFFFu);
  {
    DeviceGuard guard(0);
    ASSERT_EQ(kernels::launch_store_words({static_cast<std::uint32_t*>(buffer.device_ptr()), kBytes / 4, 77u}, nullptr),
              cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  const std::uint32_t* words = buffer.host_words(kBytes, scratch);
  for (std::uint64_t i = 0; i < kBytes / 4; ++i) ASSERT_EQ(words[i], kernels::store_words_value(77u, i)) << i;
}

// The calibration backend end to end on nccl:0: a verified point through the window, or a skipped point whose
// reason is the one unavailable_reason gave (never an error, never a fault).
TEST(NcclTarget, CalibrationPointOnNcclSelfIsVerifiedOrSkipped) {
  auto backend = make_gpu_backend(0);
  const PointSpec spec = test::small_spec("nccl:0");
  const std::optional<std::string> reason = backend->unavailable_reason(spec);
  const PointRecord r = backend->run(spec);
  if (reason) {
    expect_nccl_reason(*reason);
    EXPECT_TRUE(r.skipped);
    EXPECT_EQ(r.skip_reason, *reason);
    expect_device_clean(0);
    return;
  }
  EXPECT_FALSE(r.skipped) << r.skip_reason;
  EXPECT_TRUE(r.verification.checked);
  EXPECT_GT(r.verification.bytes_checked, 0u);
  EXPECT_EQ(r.verification.wrong, 0u);
  EXPECT_GT(r.issue_time_s.median, 0.0);
}

TEST(NcclTarget, PeerBeyondTheNodeIsUnavailableWithoutNccl) {
  const int gpus = count_devices();
  const Target target = parse_target("nccl:" + std::to_string(gpus));
  const auto reason = target_unavailable_reason(target, query_device(0), query_topology(gpus));
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, "unavailable: nccl:" + std::to_string(gpus) + " but this node has " + std::to_string(gpus) +
                         " GPUs");
}

// Two ranks in one process (ncclCommInitAll over GPUs 0 and 1): every rank reaches both windows, and a store
// from GPU 0 through dst[1] lands in rank 1's buffer. Skipped with one GPU.
TEST(NcclWindow, TwoRanksReachEachOthersWindows) {
  if (count_devices() < 2) GTEST_SKIP() << "needs 2 GPUs";
  auto comms = NcclCommGroup::init_all({0, 1});
  constexpr std::size_t kBytes = 1 << 20;
  NcclWindowTarget::Outcome made = NcclWindowTarget::create(comms, kBytes);
  if (!made.target) {
    expect_nccl_reason(made.unavailable_reason);
    return;
  }
  const NcclWindowTarget& t = *made.target;
  ASSERT_EQ(t.num_local(), 2);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(t.dst(i).size(), 2u);
    EXPECT_NE(t.dst(i)[0], nullptr);
    EXPECT_NE(t.dst(i)[1], nullptr);
  }
  store_and_check(t.rank(0).device, t.dst(0)[1], t.rank(1).local_ptr, kBytes, 0xabcdef01u);
  store_and_check(t.rank(1).device, t.dst(1)[0], t.rank(0).local_ptr, kBytes, 0x01234567u);
}

}  // namespace
}  // namespace xs::runtime

#endif  // XS_HAVE_CUDA && XS_HAVE_NCCL
