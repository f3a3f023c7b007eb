// xstage GPU tests (remote_store.loaded): the loaded-mainloop kernel through the GPU backend. The wgmma output of
// every written block is compared with a CPU reference (fresh random operands, output poisoned with NaN
// before the point), every byte of the store ring with the pattern each CTA claims (guards included), for
// both mainloops, both store patterns and the local and host targets, in both injection modes (paced storer
// warps, and the math warps' own epilogue stores); and the records are consistent.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "xs/backends/gpu/gpu_backend.hpp"
#include "../gpu_common/sm90_environment.hpp"

namespace xs {
namespace {

[[maybe_unused]] auto* const kEnv = ::testing::AddGlobalTestEnvironment(new test::Sm90Environment);

PointSpec small_loaded(const std::string& target, Mainloop mainloop, AddressMode mode) {
  PointSpec s;
  s.suite = Suite::kLoaded;
  s.target = target;
  s.num_producers = 4;                    // K_SM
  s.bytes_per_producer = 13 * 256;        // 13 rows: not a multiple of storer threads x 16 B
  s.gap_s = 2e-6;
  s.num_bursts = 256;
  s.warmup_bursts = 2;
  s.repetitions = 2;
  s.threads_per_producer = 96;            // three storer warps
  s.address_mode = mode;
  s.loaded.mainloop = mainloop;
  s.loaded.working_set = WorkingSet::kL2;  // 8 blocks, all written by 4 CTAs x 6 tiles
  s.loaded.tiles_per_cta = 6;
  s.loaded.warmup_tiles = 1;
  s.loaded.k_elems = 640;                 // 10 k-blocks: the 4-stage ring wraps within a tile
  return s;
}

using Param = std::tuple<Mainloop, std::string, AddressMode>;
class LoadedKernel : public ::testing::TestWithParam<Param> {};

TEST_P(LoadedKernel, OutputMatchesTheCpuReferenceAndEveryStoredByteIsClaimed) {
  const auto [mainloop, target, mode] = GetParam();
  auto backend = runtime::make_gpu_backend(0);
  const PointSpec spec = small_loaded(target, mainloop, mode);
  ASSERT_EQ(backend->unavailable_reason(spec), std::nullopt);
  const PointRecord r = backend->run(spec);
  ASSERT_FALSE(r.skipped) << r.skip_reason;
  ASSERT_TRUE(r.loaded.has_value());
  EXPECT_TRUE(r.verification.checked);
  EXPECT_EQ(r.verification.wrong, 0u) << "see stderr for the first mismatching words / the worst element";
  // Ring and guards always; plus 8 output blocks of 128 x 128 fp32 for wgmma.
  const std::uint64_t output_bytes = mainloop == Mainloop::kWgmma ? 8ull * 128 * 128 * 4 : 0;
  EXPECT_GT(r.verification.bytes_checked, output_bytes);
  const auto& m = *r.loaded;
  EXPECT_EQ(m.tile_time_s.samples.size(), static_cast<std::size_t>(spec.repetitions));
  EXPECT_GT(m.tile_time_s.median, 0.0);
  EXPECT_GT(m.baseline_tile_time_s.median, 0.0);
  // Per loaded launch: every CTA issued burst 0 (unconditional) and at most num_bursts, however slowly its
  // mainloop ran (under a sanitizer the counts change from launch to launch). Each repetition is checked on
  // its own: the median of an even number of counts is a mean, not a whole number of bursts.
  ASSERT_EQ(m.bytes_issued.samples.size(), static_cast<std::size_t>(spec.repetitions));
  const double burst_bytes = static_cast<double>(spec.bytes_per_producer);
  for (std::size_t rep = 0; rep < m.bytes_issued.samples.size(); ++rep) {
    const double bursts = m.bytes_issued.samples[rep] / burst_bytes;
    EXPECT_TRUE(bursts >= spec.num_producers && bursts <= static_cast<double>(spec.num_producers) * spec.num_bursts &&
                bursts == std::floor(bursts))
        << "repetition " << rep << ": the loaded launch issued " << m.bytes_issued.samples[rep] << " bytes = "
        << bursts << " bursts of " << spec.bytes_per_producer << " B; expected a whole number of bursts from K = "
        << spec.num_producers << " (burst 0 of every CTA) to K x num_bursts = "
        << static_cast<double>(spec.num_producers) * spec.num_bursts;
  }
  EXPECT_GE(m.store_span_s.median, 0.0);
  EXPECT_GT(m.mainloop_span_s.median, 0.0);
  EXPECT_GT(r.sm_clock_hz, 1e8);
}

INSTANTIATE_TEST_SUITE_P(
    MainloopsTargetsPatterns, LoadedKernel,
    ::testing::Combine(::testing::Values(Mainloop::kWgmma, Mainloop::kLoadStream),
                       ::testing::Values(std::string("local"), std::string("host")),
                       ::testing::Values(AddressMode::kFresh, AddressMode::kScattered)),
    [](const ::testing::TestParamInfo<Param>& info) {
      return std::string(mainloop_name(std::get<0>(info.param))) + "_" + std::get<1>(info.param) + "_" +
             address_mode_name(std::get<2>(info.param));
    });

// Injection epilogue: no storer warps; the math warps store B bytes after every tiles_per_burst-th tile.
PointSpec small_epilogue(const std::string& target, Mainloop mainloop, AddressMode mode, int tiles_per_burst) {
  PointSpec s = small_loaded(target, mainloop, mode);
  s.gap_s = 0;
  s.threads_per_producer = 256;           // the math threads
  s.loaded.injection = Injection::kEpilogue;
  s.loaded.tiles_per_burst = tiles_per_burst;
  s.num_bursts = epilogue_bursts(s.loaded);
  s.warmup_bursts = epilogue_warmup_bursts(s.loaded);
  return s;
}

// The checks every epilogue point must pass: the data, the exact burst count (closed loop: one burst per
// tiles_per_burst tiles of every CTA, at any speed), and the epilogue summaries.
void expect_epilogue_point(const PointSpec& spec, const PointRecord& r) {
  ASSERT_FALSE(r.skipped) << r.skip_reason;
  ASSERT_TRUE(r.loaded.has_value());
  EXPECT_TRUE(r.verification.checked);
  EXPECT_EQ(r.verification.wrong, 0u) << "see stderr for the first mismatching words / the worst element";
  const std::uint64_t output_bytes = spec.loaded.mainloop == Mainloop::kWgmma ? 8ull * 128 * 128 * 4 : 0;
  EXPECT_GT(r.verification.bytes_checked, output_bytes);
  const auto& m = *r.loaded;
  ASSERT_TRUE(m.epilogue.has_value());
  const double expected_bytes = static_cast<double>(spec.num_producers) * spec.num_bursts * spec.bytes_per_producer;
  ASSERT_EQ(m.bytes_issued.samples.size(), static_cast<std::size_t>(spec.repetitions));
  for (const double bytes : m.bytes_issued.samples) EXPECT_EQ(bytes, expected_bytes);
  const auto& e = *m.epilogue;
  for (std::size_t rep = 0; rep < e.mean_tile_time_s.samples.size(); ++rep) {
    EXPECT_GT(e.mean_tile_time_s.samples[rep], 0.0);
    EXPECT_GE(e.mean_tile_epilogue_time_s.samples[rep], e.mean_tile_time_s.samples[rep]);
    EXPECT_GT(e.baseline_mean_tile_time_s.samples[rep], 0.0);
    EXPECT_NEAR(m.slowdown.samples[rep],
                e.mean_tile_epilogue_time_s.samples[rep] / e.baseline_mean_tile_time_s.samples[rep], 1e-9);
  }
  EXPECT_GT(e.epilogue_time_s.median, 0.0);  // thread 0 issued at least one 16-B store per burst
  EXPECT_GT(m.store_span_s.median, 0.0);
  EXPECT_GE(m.drain_tail_s.median, 0.0);
  EXPECT_GT(r.sm_clock_hz, 1e8);
}

class LoadedEpilogue : public ::testing::TestWithParam<Param> {};

TEST_P(LoadedEpilogue, OutputMatchesTheCpuReferenceAndEveryStoredByteIsClaimed) {
  const auto [mainloop, target, mode] = GetParam();
  auto backend = runtime::make_gpu_backend(0);
  const PointSpec spec = small_epilogue(target, mainloop, mode, 1);
  ASSERT_EQ(backend->unavailable_reason(spec), std::nullopt);
  expect_epilogue_point(spec, backend->run(spec));
}

INSTANTIATE_TEST_SUITE_P(
    EpilogueTargetsPatterns, LoadedEpilogue,
    ::testing::Combine(::testing::Values(Mainloop::kWgmma, Mainloop::kLoadStream),
                       ::testing::Values(std::string("local"), std::string("host")),
                       ::testing::Values(AddressMode::kFresh, AddressMode::kScattered)),
    [](const ::testing::TestParamInfo<Param>& info) {
      return std::string(mainloop_name(std::get<0>(info.param))) + "_" + std::get<1>(info.param) + "_" +
             address_mode_name(std::get<2>(info.param));
    });

TEST(LoadedEpilogue, EveryThirdTileStoresAndAPacedGapIsRefused) {
  auto backend = runtime::make_gpu_backend(0);
  PointSpec spec = small_epilogue("host", Mainloop::kWgmma, AddressMode::kFresh, 3);  // 6 tiles: 2 bursts per CTA
  ASSERT_EQ(spec.num_bursts, 2);
  spec.warmup_bursts = 0;
  spec.loaded.warmup_tiles = 0;
  expect_epilogue_point(spec, backend->run(spec));
  spec.gap_s = 2e-6;                       // epilogue mode is unpaced
  ASSERT_TRUE(backend->unavailable_reason(spec).has_value());
  EXPECT_NE(backend->unavailable_reason(spec)->find("G must be 0"), std::string::npos);
}

TEST(LoadedKernel, StreamedWorkingSetAndBackToBackStoresVerify) {
  auto backend = runtime::make_gpu_backend(0);
  PointSpec spec = small_loaded("host", Mainloop::kWgmma, AddressMode::kFresh);
  spec.num_producers = 8;
  spec.gap_s = 0;                          // unpaced
  spec.loaded.working_set = WorkingSet::kHbm;
  spec.loaded.k_elems = 512;
  spec.loaded.tiles_per_cta = 4;
  const PointRecord r = backend->run(spec);
  ASSERT_TRUE(r.loaded.has_value());
  EXPECT_EQ(r.verification.wrong, 0u);
  for (const double bytes : r.loaded->bytes_issued.samples)  // burst 0 of each CTA at least, at any speed
    EXPECT_GE(bytes, static_cast<double>(spec.num_producers * spec.bytes_per_producer));
}

TEST(LoadedKernel, NoStoreBurstsBeyondTheCapAndABadKnobIsRefused) {
  auto backend = runtime::make_gpu_backend(0);
  PointSpec spec = small_loaded("local", Mainloop::kWgmma, AddressMode::kFresh);
  spec.gap_s = 0;
  spec.num_bursts = 4;                     // the storers stop at the cap, the mainloop goes on
  spec.warmup_bursts = 1;
  const PointRecord r = backend->run(spec);
  ASSERT_TRUE(r.loaded.has_value());
  EXPECT_EQ(r.verification.wrong, 0u);
  EXPECT_LE(r.loaded->bytes_issued.max, 4.0 * spec.num_producers * spec.bytes_per_producer);
  spec.loaded.k_elems = 100;               // not a multiple of 64
  EXPECT_TRUE(backend->unavailable_reason(spec).has_value());
}

}  // namespace
}  // namespace xs
