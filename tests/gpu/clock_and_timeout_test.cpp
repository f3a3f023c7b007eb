// xstage GPU tests: cycle-to-second conversion is sane, a known gap G measures as G, and a device
// spin-wait that cannot finish traps and surfaces as an xs::Error naming its flag.
#if defined(XS_HAVE_CUDA)  // CPU-only builds compile only the "not built" check (gpu_environment_test)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "xs/common/error.hpp"
#include "gpu_test_util.hpp"
#include "xs/backends/gpu/gpu_backend_options.hpp"

namespace xs {
namespace {

TEST(BurstClock, DerivedSmClockIsPlausibleAndAGapSpinMeasuresAsG) {
  auto backend = runtime::make_gpu_backend(0);
  PointSpec spec = test::small_spec("local");
  spec.num_producers = 1;
  spec.gap_s = 50e-6;
  spec.num_bursts = 10;
  spec.repetitions = 3;
  const PointRecord r = backend->run(spec);
  EXPECT_GT(r.sm_clock_hz, 0.5e9);
  EXPECT_LT(r.sm_clock_hz, 2.2e9);
  // T_period - T_iss is the gap plus a few hundred cycles of bookkeeping (record store, barriers).
  EXPECT_NEAR(r.period_s.median - r.issue_time_s.median, spec.gap_s, 0.1 * spec.gap_s)
      << "period " << r.period_s.median << " s, issue " << r.issue_time_s.median << " s";
}

// Child process (threadsafe death test: a fresh CUDA context, since the trap poisons the context).
[[noreturn]] void run_with_unreachable_start_barrier() {
  runtime::GpuBackendOptions options;
  options.barrier_timeout_ns = 50'000'000;  // 50 ms
  options.preset_start_time_ns = std::numeric_limits<std::uint64_t>::max() / 2;  // never reached
  try {
    auto backend = runtime::make_gpu_backend(0, options);
    backend->run(test::small_spec("local"));
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(static_cast<int>(e.code()));
  }
  std::exit(0);
}

TEST(BurstKernelDeathTest, StartBarrierTimeoutTrapsAndNamesTheFlag) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_with_unreachable_start_barrier(), ::testing::ExitedWithCode(3), "spin-wait on start_time_ns");
}

}  // namespace
}  // namespace xs

#endif  // XS_HAVE_CUDA
