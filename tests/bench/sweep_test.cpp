// Tests for bench/sweep: config parsing is strict, expansion is the cartesian product, bad specs fail.
#include "xs/bench/sweep.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "xs/common/error.hpp"
#include "xs/report/fnv1a.hpp"

namespace xs::bench {
namespace {

nlohmann::json small_config() {
  return nlohmann::json::parse(R"({
    "target": "host",
    "defaults": {"num_bursts": 16, "warmup_bursts": 4, "repetitions": 3},
    "blocks": [
      {"name": "zero_gap", "suite": "periodic", "K": "8,16", "B": "16KiB:64KiB:x2", "G": "0"},
      {"name": "iso", "suite": "isolated", "K": 132, "B": "1KiB:4KiB:x2", "G": "0:2us:+1us", "repetitions": 7},
      {"name": "ctl", "suite": "local_control", "K": "4", "B": "1KiB", "G": "0:2us:+1us"}
    ]})");
}

TEST(Sweep, ExpandsCartesianProduct) {
  const auto points = expand(sweep_config_from_json(small_config()));
  // 2 K x 3 B zero-gap + 3 isolated (G ignored) + 3 local-control gaps.
  ASSERT_EQ(points.size(), 12u);
  EXPECT_EQ(points[0].spec.num_producers, 8);
  EXPECT_EQ(points[0].spec.bytes_per_producer, 16384u);
  EXPECT_EQ(points[0].spec.repetitions, 3);
  EXPECT_EQ(points[6].spec.suite, Suite::kIsolated);
  EXPECT_EQ(points[6].spec.num_bursts, 1);
  EXPECT_EQ(points[6].spec.repetitions, 7);
  EXPECT_EQ(points[6].spec.gap_s, 0.0);
  EXPECT_EQ(points[9].spec.target, "local");  // the control always writes HBM
  EXPECT_NEAR(points[11].spec.gap_s, 2e-6, 1e-15);
}

TEST(Sweep, PointsRunBlockThenKThenBThenG) {
  auto j = small_config();
  j["blocks"] = nlohmann::json::array(
      {{{"name", "a"}, {"suite", "periodic"}, {"K", "16,8"}, {"B", "2KiB:8KiB:x2"}, {"G", "1us,0"}},
       {{"name", "b"}, {"suite", "local_control"}, {"K", "4"}, {"B", "1KiB,512"}, {"G", "0:1us:+0.5us"}}});
  const auto points = expand(sweep_config_from_json(j));
  std::vector<std::string> expected;
  for (int k : {16, 8})
    for (int b : {2048, 4096, 8192})
      for (double g : {1e-6, 0.0}) expected.push_back(fmt::format("a K={} B={} G={:g}", k, b, g));
  for (int b : {1024, 512})
    for (double g : {0.0, 0.5e-6, 1e-6}) expected.push_back(fmt::format("b K=4 B={} G={:g}", b, g));
  std::vector<std::string> got;
  for (const auto& p : points)
    got.push_back(fmt::format("{} K={} B={} G={:g}", p.block, p.spec.num_producers, p.spec.bytes_per_producer,
                              p.spec.gap_s));
  EXPECT_EQ(got, expected);
}

// The built-in calibrations' and the committed configs' points, blocks and keys in order, as expanded before the
// sweep declared its axes (issue 30).
std::string points_fingerprint(const SweepConfig& config) {
  std::string keys;
  for (const auto& p : expand(config)) keys += p.block + " " + point_key(p.spec) + "\n";
  return report::fnv1a64(keys);
}

TEST(Sweep, BuiltInAndCommittedSweepsExpandToTheSamePointsAsBefore) {
  EXPECT_EQ(points_fingerprint(default_calibration("host", 50e9)), "fnv1a64:51f85964ebf441dd");
  EXPECT_EQ(points_fingerprint(default_calibration("local", 50e9)), "fnv1a64:c243e5547ddf49ec");
  const std::string dir = std::string(XS_TEST_DATA_DIR) + "/../../configs/calibrate/";
  for (const auto& [file, fingerprint] : std::vector<std::pair<std::string, std::string>>{
           {"host-default.json", "fnv1a64:1959e4c5361bc59f"},
           {"host-fa.json", "fnv1a64:a7856684c680f01e"},
           {"host-small-k.json", "fnv1a64:bb0c3b54f0e06809"},
           {"loaded-burst-volume.json", "fnv1a64:09206c3bee46f6b0"},
           {"loaded-epilogue-wide.json", "fnv1a64:3d185e3ce5c0c8b0"},
           {"loaded-epilogue.json", "fnv1a64:ebf34c6ed6c6f6a5"},
           {"quick.json", "fnv1a64:a0f000eaa62ecd4a"}})
    EXPECT_EQ(points_fingerprint(load_sweep_config(dir + file)), fingerprint) << file;
}

TEST(Sweep, DefaultGapsDoNotMoveWithSmallChangesOfTheRateGuess) {
  // The guess is a fresh measurement each run; the gate matches points by spec, so the specs must agree.
  const auto a = expand(default_calibration("host", 55.18e9));
  const auto b = expand(default_calibration("host", 55.22e9));
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(point_key(a[i].spec), point_key(b[i].spec)) << i;
}

TEST(Sweep, SharedSpecsAreMeasuredOnce) {
  auto j = small_config();
  j["blocks"].push_back({{"name", "again"}, {"suite", "periodic"}, {"K", "8"}, {"B", "16KiB"}, {"G", "0:1us:+1us"}});
  const auto points = expand(sweep_config_from_json(j));
  ASSERT_EQ(points.size(), 13u);  // (8, 16KiB, 0) already belongs to zero_gap; only G = 1us is new
  EXPECT_EQ(points.back().block, "again");
  EXPECT_NEAR(points.back().spec.gap_s, 1e-6, 1e-15);
  std::set<std::string> keys;
  for (const auto& p : expand(default_calibration("host", 50e9))) EXPECT_TRUE(keys.insert(point_key(p.spec)).second);
}

TEST(Sweep, RoundTripsThroughJson) {
  const SweepConfig a = sweep_config_from_json(small_config());
  const SweepConfig b = sweep_config_from_json(to_json(a));
  EXPECT_EQ(expand(a).size(), expand(b).size());
  EXPECT_EQ(to_json(a), to_json(b));
}

TEST(Sweep, UnknownKeysAndBadValuesAreNamed) {
  auto j = small_config();
  j["blocks"][0]["gap"] = "1us";
  try {
    sweep_config_from_json(j);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("config.blocks[0].gap"), std::string::npos) << e.what();
  }
  j = small_config();
  j["blocks"][0]["B"] = "100";  // not a multiple of 16
  EXPECT_THROW(sweep_config_from_json(j), Error);
  j = small_config();
  j["blocks"][0]["B"] = "64KiB:16KiB:x2";  // inverted
  EXPECT_THROW(sweep_config_from_json(j), Error);
  j = small_config();
  j["defaults"]["num_bursts"] = 4;  // must exceed warm-up by 2
  EXPECT_THROW(sweep_config_from_json(j), Error);
  j = small_config();
  j["blocks"][0]["K"] = "0";
  EXPECT_THROW(sweep_config_from_json(j), Error);
  EXPECT_THROW(sweep_config_from_json(nlohmann::json::parse(R"({"blocks": []})")), Error);
}

TEST(Sweep, DefaultCalibrationSpansBothBranches) {
  const double rate_bps = 50e9;
  const auto points = expand(default_calibration("host", rate_bps));
  bool zero_gap = false, isolated = false, control = false;
  double max_gap_over_horizon = 0;
  for (const auto& p : points) {
    zero_gap |= p.block == "zero_gap";
    isolated |= p.spec.suite == Suite::kIsolated;
    control |= p.spec.suite == Suite::kLocalControl;
    if (p.block == "gap_sweep")
      max_gap_over_horizon = std::max(max_gap_over_horizon,
                                      p.spec.gap_s / (static_cast<double>(p.spec.volume_bytes()) / rate_bps));
  }
  EXPECT_TRUE(zero_gap && isolated && control);
  EXPECT_GT(max_gap_over_horizon, 2.0);  // the recovered plateau (G > V/R) is sampled
  EXPECT_LT(points.size(), 400u);
}

}  // namespace
}  // namespace xs::bench

namespace xs::bench {
namespace {

// Every committed sweep config parses and expands (they are inputs users copy).
TEST(Sweep, CommittedConfigsLoad) {
  const std::string dir = std::string(XS_TEST_DATA_DIR) + "/../../configs/calibrate/";
  for (const char* name : {"host-default.json", "quick.json", "loaded-epilogue.json"}) {
    SCOPED_TRACE(name);
    const auto points = expand(load_sweep_config(dir + name));
    EXPECT_GT(points.size(), 10u);
  }
  EXPECT_THROW(load_sweep_config(dir + "does-not-exist.json"), Error);
}

}  // namespace
}  // namespace xs::bench

namespace xs::bench {
namespace {

TEST(Sweep, DefaultBlocksHaveObjectOverridesSoFlagsCanReplaceThem) {
  // A CLI flag erases the key from every block's overrides: null overrides made that a json type_error.
  for (const auto& block : default_calibration("host", 50e9).blocks)
    EXPECT_TRUE(block.overrides.is_object()) << block.name;
}

TEST(Sweep, CapsAreCheckedBeforeExpanding) {
  SweepConfig c;
  c.blocks.push_back({"big", Suite::kPeriodic, "1:1000:+1", "16:2000:+16", "0", nlohmann::json::object()});
  try {
    expand(c);  // 125,000 points: refused from the range sizes, before any point is built
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 100000 points"), std::string::npos) << e.what();
  }
  // The total counts over blocks: two blocks of 60,000 are over the cap although each is under it.
  c.blocks = {{"a", Suite::kPeriodic, "1:600:+1", "16:1600:+16", "0", nlohmann::json::object()},
              {"b", Suite::kPeriodic, "601:1200:+1", "16:1600:+16", "0", nlohmann::json::object()}};
  EXPECT_THROW(expand(c), Error);
  c.blocks = {{"one", Suite::kPeriodic, "8", "16KiB", "0", nlohmann::json::object()}};
  c.defaults = {{"repetitions", kMaxRepetitions}};
  EXPECT_EQ(expand(c).size(), 1u);
  c.defaults = {{"repetitions", kMaxRepetitions + 1}};
  EXPECT_THROW(expand(c), Error);
  c.defaults = {{"num_bursts", kMaxBursts + 1}};
  EXPECT_THROW(expand(c), Error);
  // V = K B past 1 TiB is refused by division: 2^60 B at K = 132 wraps to a small V in uint64 (hostile-CLI review).
  c.defaults = nlohmann::json::object();
  c.blocks = {{"huge", Suite::kIsolated, "132", "1152921504606846976", "0", nlohmann::json::object()}};
  try {
    expand(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("V = K x B = 132 x 1152921504606846976"), std::string::npos) << e.what();
  }
  c.blocks = {{"edge", Suite::kIsolated, "1", std::to_string(kMaxBurstBytes), "0", nlohmann::json::object()}};
  EXPECT_EQ(expand(c).size(), 1u);  // exactly 1 TiB is allowed
}

TEST(Sweep, RaisedBurstCountsAreDescribed) {
  SweepConfig c;
  c.defaults = {{"num_bursts", 5}, {"warmup_bursts", 1}, {"min_stream_bytes", "1MiB"}};
  c.blocks = {{"small", Suite::kPeriodic, "8", "16KiB", "0", nlohmann::json::object()},     // V 128 KiB: raised
              {"large", Suite::kPeriodic, "8", "256KiB", "0", nlohmann::json::object()}};   // V 2 MiB: as given
  const auto points = expand(c);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].requested_num_bursts, 5);
  EXPECT_GT(points[0].spec.num_bursts, 5);
  EXPECT_EQ(points[1].spec.num_bursts, 5);
  const auto lines = describe_adjustments(c, points);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("block small: num_bursts 5 -> " + std::to_string(points[0].spec.num_bursts)),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("min_stream_bytes"), std::string::npos);
  c.defaults["min_stream_bytes"] = 0;
  EXPECT_TRUE(describe_adjustments(c, expand(c)).empty());
}

}  // namespace
}  // namespace xs::bench

namespace xs::bench {
namespace {

TEST(Sweep, BlockNamesAreUnique) {
  auto j = nlohmann::json::parse(R"({"blocks": [
      {"name": "a", "suite": "periodic", "K": "8", "B": "16KiB"},
      {"name": "a", "suite": "isolated", "K": "8", "B": "16KiB"}]})");
  try {
    sweep_config_from_json(j);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("config.blocks[1].name"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace xs::bench

namespace xs::bench {
namespace {

TEST(Sweep, ConfigFilesAreReadStrictly) {
  const std::string path = ::testing::TempDir() + "xs_sweep_config.json";
  for (const char* text : {R"({"blocks": [{"suite": "periodic", "K": 1e999, "B": "16KiB"}]})",
                           R"({"blocks": [], "blocks": [{"suite": "periodic", "K": "8", "B": "16KiB"}]})",
                           R"({"blocks": [)"}) {
    { std::ofstream(path) << text; }
    try {
      load_sweep_config(path);
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput) << text;
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace xs::bench

namespace xs::bench {
namespace {

std::vector<ExpandedPoint> epilogue_points(const SweepConfig& config) {
  std::vector<ExpandedPoint> out;
  for (const auto& p : expand(config))
    if (p.spec.suite == Suite::kLoaded && p.spec.loaded.injection == Injection::kEpilogue) out.push_back(p);
  return out;
}

// The epilogue blocks of the default calibration: K 132/66/33 x B 2..128 KiB, rows and hbm at K 132, G 0, burst
// counts derived from the tiles, and every launch short on a ~50 GB/s path (K B tiles / R <= 25 ms).
TEST(Sweep, DefaultEpilogueBlocksAreShortOnTheHostPathAndDeriveTheirBursts) {
  const auto points = epilogue_points(default_calibration("host", 55e9));
  ASSERT_EQ(points.size(), 18u);
  std::set<std::pair<int, std::uint64_t>> fresh_l2;
  double total_s = 0;
  int rows = 0, hbm = 0;
  for (const auto& p : points) {
    const PointSpec& s = p.spec;
    EXPECT_EQ(p.block.rfind("loaded_epilogue", 0), 0u) << p.block;
    EXPECT_EQ(s.gap_s, 0.0);
    EXPECT_EQ(s.threads_per_producer, kLoadedMathThreads);
    EXPECT_EQ(s.loaded.mainloop, Mainloop::kWgmma);
    EXPECT_EQ(s.num_bursts, s.loaded.tiles_per_cta / s.loaded.tiles_per_burst);
    EXPECT_EQ(s.warmup_bursts, s.loaded.warmup_tiles / s.loaded.tiles_per_burst);
    const double drain_bound_s = static_cast<double>(s.volume_bytes()) * s.loaded.tiles_per_cta / 50e9;
    EXPECT_LE(drain_bound_s, 0.025) << p.block << " B " << s.bytes_per_producer;
    total_s += 6 * drain_bound_s;  // warm-up + 5 repetitions
    if (s.address_mode == AddressMode::kScattered) ++rows;
    else if (s.loaded.working_set == WorkingSet::kHbm) ++hbm;
    else fresh_l2.insert({s.num_producers, s.bytes_per_producer});
  }
  EXPECT_EQ(fresh_l2.size(), 12u);  // {132, 66, 33} x {2, 8, 32, 128} KiB
  EXPECT_EQ(rows, 4);
  EXPECT_EQ(hbm, 2);
  EXPECT_LT(total_s, 10.0);
}

// configs/calibrate/loaded-epilogue.json holds exactly the built-in epilogue blocks.
TEST(Sweep, CommittedEpilogueConfigIsTheBuiltInEpilogueBlocks) {
  const auto file = load_sweep_config(std::string(XS_TEST_DATA_DIR) + "/../../configs/calibrate/loaded-epilogue.json");
  const auto from_file = epilogue_points(file);
  const auto built_in = epilogue_points(default_calibration("host", 55e9));
  ASSERT_EQ(from_file.size(), expand(file).size()) << "the file holds epilogue blocks only";
  ASSERT_EQ(from_file.size(), built_in.size());
  for (std::size_t i = 0; i < built_in.size(); ++i) {
    EXPECT_EQ(from_file[i].block, built_in[i].block);
    EXPECT_EQ(point_key(from_file[i].spec), point_key(built_in[i].spec)) << built_in[i].block;
  }
}

TEST(Sweep, EpilogueKnobsAreCheckedWithClearMessages) {
  auto expect_refused = [](const nlohmann::json& block, const std::string& needle) {
    nlohmann::json config = {{"target", "host"}, {"blocks", nlohmann::json::array({block})}};
    try {
      sweep_config_from_json(config);
      ADD_FAILURE() << "accepted: " << block.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  nlohmann::json ok = loaded_epilogue_overrides("l2", "fresh", 64);
  ok.update({{"name", "e"}, {"suite", "loaded"}, {"K", "8"}, {"B", "8KiB"}, {"G", "0"}});
  EXPECT_EQ(expand(sweep_config_from_json({{"target", "host"}, {"blocks", nlohmann::json::array({ok})}})).size(), 1u);
  // Integers beyond int are refused as written, not wrapped (4294967301 once became 5 tiles).
  for (const char* key : {"tiles_per_cta", "warmup_tiles", "num_bursts", "threads_per_producer"}) {
    nlohmann::json big = ok;
    big[key] = 4294967301ULL;
    expect_refused(big, "4294967301 is out of range");
    big[key] = -4294967040LL;
    expect_refused(big, "-4294967040 is out of range");
  }
  nlohmann::json paced_gap = ok;
  paced_gap["G"] = "2us";
  expect_refused(paced_gap, "G must be 0");
  nlohmann::json bad_name = ok;
  bad_name["injection"] = "closed";
  expect_refused(bad_name, "accepted: paced, epilogue");
  nlohmann::json storers = ok;
  storers["threads_per_producer"] = 128;
  expect_refused(storers, "math threads store");
  nlohmann::json every = ok;
  every["tiles_per_burst"] = 65;
  expect_refused(every, "tiles_per_burst=65 must be in [1, tiles_per_cta=64]");
  nlohmann::json paced_every = ok;
  paced_every["injection"] = "paced";
  paced_every["tiles_per_burst"] = 2;
  expect_refused(paced_every, "only injection \"epilogue\" has tiles_per_burst");
  // A spec made by hand must carry the derived burst counts.
  PointSpec s = expand(sweep_config_from_json({{"target", "host"}, {"blocks", nlohmann::json::array({ok})}}))[0].spec;
  EXPECT_EQ(s.num_bursts, 64);
  s.num_bursts = 4096;
  EXPECT_THROW(validate_spec(s), Error);
}

}  // namespace
}  // namespace xs::bench

namespace xs::bench {
namespace {

// configs/calibrate/loaded-epilogue-wide.json: the default epilogue blocks, unchanged, plus 8 points that sit
// below the drain bound on a ~52 GB/s path (K B / T0 < R with T0 3 us for L2 operands, 9.3 us for HBM), the
// points that identify eq. I2's per-byte cost.
TEST(Sweep, TheWideEpilogueConfigAddsPointsBelowTheDrainBound) {
  const std::string dir = std::string(XS_TEST_DATA_DIR) + "/../../configs/calibrate/";
  const auto base = epilogue_points(load_sweep_config(dir + "loaded-epilogue.json"));
  const auto wide = epilogue_points(load_sweep_config(dir + "loaded-epilogue-wide.json"));
  ASSERT_EQ(base.size(), 18u);
  ASSERT_EQ(wide.size(), 26u);
  for (std::size_t i = 0; i < base.size(); ++i) {
    EXPECT_EQ(base[i].block, wide[i].block);
    EXPECT_EQ(point_key(base[i].spec), point_key(wide[i].spec)) << base[i].block;
  }
  for (std::size_t i = base.size(); i < wide.size(); ++i) {
    const PointSpec& s = wide[i].spec;
    const double t0 = s.loaded.working_set == WorkingSet::kHbm ? 9.3e-6 : 3.0e-6;
    const double offered = double(s.volume_bytes()) / t0;  // V = K B per tile time
    EXPECT_LT(offered, 0.9 * 52e9) << "K " << s.num_producers << " B " << s.volume_bytes();
  }
}

}  // namespace
}  // namespace xs::bench
