// xstage GPU tests: what the backend reports before any launch (unavailable targets, bad specs), its
// describe() keys and the copy-engine reference.
#if defined(XS_HAVE_CUDA)  // CPU-only builds compile only the "not built" check (gpu_environment_test)
#include <gtest/gtest.h>

#include "xs/common/error.hpp"
#include "gpu_test_util.hpp"

namespace xs {
namespace {

std::string reason_for(const Backend& backend, const PointSpec& spec) {
  const auto reason = backend.unavailable_reason(spec);
  return reason ? *reason : std::string("<none>");
}

TEST(GpuBackend, UnreachablePeerIsUnavailableAndRunsAsSkipped) {
  auto backend = runtime::make_gpu_backend(0);
  const int gpus = test::num_gpus(*backend);
  const PointSpec spec = test::small_spec("peer:" + std::to_string(gpus == 1 ? 1 : gpus));
  const std::string reason = reason_for(*backend, spec);
  EXPECT_EQ(reason.rfind("unavailable", 0), 0u) << reason;
  if (gpus == 1) {
    EXPECT_EQ(reason, "unavailable: one GPU");
  }
  const PointRecord r = backend->run(spec);
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.skip_reason, reason);
}

TEST(GpuBackend, NcclTargetIsUnavailableWithItsReason) {
  auto backend = runtime::make_gpu_backend(0);
  // nccl:<GPU count> is beyond the node everywhere (nccl:1 is a real target on a multi-GPU node).
  const std::string reason =
      reason_for(*backend, test::small_spec("nccl:" + std::to_string(test::num_gpus(*backend))));
  EXPECT_EQ(reason.rfind("unavailable", 0), 0u) << reason;
}

TEST(GpuBackend, BadSpecsAreRejectedBeforeAnyLaunchWithTheirReason) {
  auto backend = runtime::make_gpu_backend(0);
  PointSpec not_multiple = test::small_spec();
  not_multiple.bytes_per_producer = 100;
  EXPECT_NE(reason_for(*backend, not_multiple).find("multiple of 16"), std::string::npos);

  PointSpec too_many = test::small_spec();
  too_many.num_producers = test::sm_count(*backend) + 1;
  EXPECT_NE(reason_for(*backend, too_many).find("exceeds co-resident producers"), std::string::npos)
      << reason_for(*backend, too_many);

  PointSpec too_many_warps = test::small_spec();
  too_many_warps.producer_kind = ProducerKind::kWarp;
  too_many_warps.threads_per_producer = 32;
  too_many_warps.num_producers = 32 * test::sm_count(*backend) + 1;
  EXPECT_NE(reason_for(*backend, too_many_warps).find("exceeds co-resident warp producers"), std::string::npos);

  PointSpec bogus_target = test::small_spec("bogus");
  // bench::validate_spec names it first ("is not a target"); runtime's parse_target ("is not a GPU target") behind it.
  EXPECT_NE(reason_for(*backend, bogus_target).find("'bogus' is not a"), std::string::npos)
      << reason_for(*backend, bogus_target);

  PointSpec control_elsewhere = test::small_spec("host");
  control_elsewhere.suite = Suite::kLocalControl;
  EXPECT_NE(reason_for(*backend, control_elsewhere).find("target must be local"), std::string::npos);

  for (const PointSpec& bad : {not_multiple, too_many, bogus_target, control_elsewhere}) {
    try {
      backend->run(bad);
      ADD_FAILURE() << "run() accepted " << bad.target << " K=" << bad.num_producers << " B=" << bad.bytes_per_producer;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
    }
  }
}

TEST(GpuBackend, DescribeNamesDevicesVersionsAndPeerMatrix) {
  auto backend = runtime::make_gpu_backend(0);
  const auto j = backend->describe();
  EXPECT_EQ(j.at("backend"), "gpu");
  const int gpus = j.at("num_gpus");
  ASSERT_GE(gpus, 1);
  ASSERT_EQ(j.at("devices").size(), static_cast<std::size_t>(gpus));
  for (const char* key : {"index", "name", "sm_count", "l2_bytes", "clock_rate_hz", "memory_clock_hz", "pci_bus_id"})
    EXPECT_TRUE(j.at("devices").at(0).contains(key)) << key;
  EXPECT_GT(j.at("devices").at(0).at("clock_rate_hz").get<double>(), 0.0);
  EXPECT_GT(j.at("driver_version").get<int>(), 0);
  EXPECT_GT(j.at("cuda_runtime_version").get<int>(), 0);
  ASSERT_EQ(j.at("peer_access").size(), static_cast<std::size_t>(gpus));
  EXPECT_EQ(j.at("peer_access").at(0).size(), static_cast<std::size_t>(gpus));
  // The quantity definitions live in one place (make_meta's meta.definitions), not in a backend.
  EXPECT_FALSE(j.contains("definitions"));
  const auto l2 = j.at("devices").at(0).at("l2_bytes").get<std::uint64_t>();
  EXPECT_GE(j.at("burst_kernel").at("scattered_ring_min_bytes").get<std::uint64_t>(), 2 * l2);
  EXPECT_EQ(j.at("burst_kernel").at("scattered_row_bytes"), 256);
}

TEST(GpuBackend, CopyEngineReferenceExistsForLocalAndHostOnly) {
  auto backend = runtime::make_gpu_backend(0);
  EXPECT_GT(backend->reference_bandwidth_bps("local").value_or(0), 0.0);
  EXPECT_GT(backend->reference_bandwidth_bps("host").value_or(0), 0.0);
  EXPECT_FALSE(backend->reference_bandwidth_bps("nccl:" + std::to_string(test::num_gpus(*backend))).has_value());
  EXPECT_FALSE(backend->reference_bandwidth_bps("peer:" + std::to_string(test::num_gpus(*backend))).has_value());
}

}  // namespace
}  // namespace xs

#endif  // XS_HAVE_CUDA
