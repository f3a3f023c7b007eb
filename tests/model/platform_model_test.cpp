// tests/model: PlatformModel tables (interpolation inside, between K, clamped outside with the extrapolated
// flag, lower-bound Q flagged), the JSON round trip, and strict reading of calibration files.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/common/error.hpp"
#include "xs/fit/calibration_file.hpp"
#include "xs/model/platform_model.hpp"

namespace m = xs::model;
using nlohmann::json;

namespace {

const std::string kDataDir = std::string(XS_TEST_DATA_DIR) + "/model/";

// K = 8: V 1000 -> 1 us, 3000 -> 2 us.  K = 16: V 1000 -> 3 us, 3000 -> 6 us.
json table_section() {
  return json::parse(R"({
    "R_Bps": 717e9, "R_ci95": [700e9, 730e9],
    "tiss0": [{"K": 16, "V_bytes": 3000, "s": 6e-6}, {"K": 8, "V_bytes": 1000, "s": 1e-6},
              {"K": 8, "V_bytes": 3000, "s": 2e-6}, {"K": 16, "V_bytes": 1000, "s": 3e-6}],
    "Q": [{"K": 8, "bytes": 1000, "ci95": [900, 1100], "bound": "fit"},
          {"K": 16, "bytes": 3000, "ci95": [2900, 3100], "bound": "fit"},
          {"K": 32, "bytes": 5000, "ci95": [5000, 5000], "bound": "lower"}],
    "fit": {"ignored": true}
  })");
}

TEST(PlatformModel, Tiss0InsideAndBetweenVolumes) {
  const auto model = m::PlatformModel::from_json(table_section());
  EXPECT_DOUBLE_EQ(model.drain_rate_bps(), 717e9);
  auto at = model.tiss0_s(8, 1000);
  EXPECT_DOUBLE_EQ(at.value, 1e-6);
  EXPECT_FALSE(at.extrapolated);
  at = model.tiss0_s(8, 2000);  // halfway in V
  EXPECT_DOUBLE_EQ(at.value, 1.5e-6);
  EXPECT_FALSE(at.extrapolated);
}

TEST(PlatformModel, Tiss0BetweenProducerCountsIsLinearInK) {
  const auto model = m::PlatformModel::from_json(table_section());
  const auto at = model.tiss0_s(12, 2000);  // K row values at V=2000: 1.5 us and 4.5 us; K halfway
  EXPECT_NEAR(at.value, 3.0e-6, 1e-18);
  EXPECT_FALSE(at.extrapolated);
  EXPECT_NEAR(model.tiss0_s(10, 1000).value, 1.5e-6, 1e-18);  // a quarter of the way from K=8 to K=16
}

TEST(PlatformModel, Tiss0ClampedOutsideWithFlag) {
  const auto model = m::PlatformModel::from_json(table_section());
  auto at = model.tiss0_s(8, 10000);  // beyond the largest V: end value
  EXPECT_DOUBLE_EQ(at.value, 2e-6);
  EXPECT_TRUE(at.extrapolated);
  at = model.tiss0_s(8, 10);
  EXPECT_DOUBLE_EQ(at.value, 1e-6);
  EXPECT_TRUE(at.extrapolated);
  at = model.tiss0_s(148, 3000);  // beyond the largest K: nearest row
  EXPECT_DOUBLE_EQ(at.value, 6e-6);
  EXPECT_TRUE(at.extrapolated);
  at = model.tiss0_s(1, 2000);
  EXPECT_DOUBLE_EQ(at.value, 1.5e-6);
  EXPECT_TRUE(at.extrapolated);
}

TEST(PlatformModel, CapacityInterpolatesClampsAndFlagsLowerBound) {
  const auto model = m::PlatformModel::from_json(table_section());
  ASSERT_TRUE(model.has_capacity());
  auto q = model.capacity_bytes(12);
  EXPECT_DOUBLE_EQ(q.value, 2000);
  EXPECT_FALSE(q.extrapolated);
  EXPECT_FALSE(q.is_lower_bound);
  q = model.capacity_bytes(4);
  EXPECT_DOUBLE_EQ(q.value, 1000);
  EXPECT_TRUE(q.extrapolated);
  EXPECT_FALSE(q.is_lower_bound);
  q = model.capacity_bytes(32);  // the "lower" entry itself
  EXPECT_DOUBLE_EQ(q.value, 5000);
  EXPECT_TRUE(q.is_lower_bound);
  EXPECT_FALSE(q.extrapolated);
  q = model.capacity_bytes(24);  // leans on the "lower" entry: also only a bound
  EXPECT_DOUBLE_EQ(q.value, 4000);
  EXPECT_TRUE(q.is_lower_bound);
  q = model.capacity_bytes(64);
  EXPECT_TRUE(q.is_lower_bound);
  EXPECT_TRUE(q.extrapolated);
}

TEST(PlatformModel, JsonRoundTripKeepsLookups) {
  const auto model = m::PlatformModel::from_json(table_section());
  const auto again = m::PlatformModel::from_json(model.to_json());
  for (int k : {1, 8, 12, 16, 24, 40})
    for (double v : {10.0, 1000.0, 2000.0, 5000.0}) {
      EXPECT_EQ(model.tiss0_s(k, v).value, again.tiss0_s(k, v).value);
      EXPECT_EQ(model.tiss0_s(k, v).extrapolated, again.tiss0_s(k, v).extrapolated);
      EXPECT_EQ(model.capacity_bytes(k).is_lower_bound, again.capacity_bytes(k).is_lower_bound);
    }
  EXPECT_EQ(model.to_json()["R_ci95"], json({700e9, 730e9}));
}

TEST(PlatformModel, ConstantModelAppliesEverywhereAndRoundTrips) {
  const auto model = m::PlatformModel::constant(717e9, 0.76e-6, 4456296);
  for (const auto& c : {m::PlatformModel(model), m::PlatformModel::from_json(model.to_json())}) {
    EXPECT_DOUBLE_EQ(c.tiss0_s(148, 4849664).value, 0.76e-6);
    EXPECT_FALSE(c.tiss0_s(1, 1).extrapolated);
    EXPECT_DOUBLE_EQ(c.capacity_bytes(7).value, 4456296);
    EXPECT_FALSE(c.capacity_bytes(7).extrapolated);
  }
  EXPECT_FALSE(m::PlatformModel::constant(717e9, 0.76e-6, 0).has_capacity());
}

void expect_input_error(const json& section, const std::string& field) {
  try {
    m::PlatformModel::from_json(section);
    ADD_FAILURE() << "accepted a section with a bad " << field;
  } catch (const xs::Error& e) {
    EXPECT_EQ(e.code(), xs::ExitCode::kBadInput);
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(PlatformModel, FromJsonNamesTheBadField) {
  json s = table_section();
  s.erase("R_Bps");
  expect_input_error(s, "model.R_Bps");
  s = table_section();
  s["R_Bps"] = "717GB/s";
  expect_input_error(s, "model.R_Bps");
  s = table_section();
  s["tiss0"][1]["K"] = 8.5;
  expect_input_error(s, "model.tiss0[1].K");
  s = table_section();
  s["Q"][2]["bound"] = "upper";
  expect_input_error(s, "model.Q[2].bound");
  s = table_section();
  s["Q"][0]["ci95"] = json({2, 1});
  expect_input_error(s, "model.Q[0].ci95");
  s = table_section();
  s["R_ci95"] = json({740e9, 760e9});  // an interval that does not hold its value (R 717 GB/s)
  expect_input_error(s, "model.R_ci95");
  for (double lo : {0.0, -1e12}) {  // a rate's interval starts above 0 (it read as "anything": 0..inf predictions)
    s = table_section();
    s["R_ci95"] = json({lo, 730e9});
    expect_input_error(s, "model.R_ci95");
  }
  s = table_section();
  s["tiss0"][0]["ci95"] = json({-1e-7, 1e-5});
  expect_input_error(s, "model.tiss0[0].ci95");
  s = table_section();
  s["Q"][0]["ci95"] = json({-5e6, 1100});
  expect_input_error(s, "model.Q[0].ci95");
  s = table_section();
  s["tiss0"][0]["ci95"] = json({s["tiss0"][0]["s"].get<double>() * 2, s["tiss0"][0]["s"].get<double>() * 3});
  expect_input_error(s, "model.tiss0[0].ci95");
  s = table_section();
  s["Q"][1]["K"] = 8;
  expect_input_error(s, "model.Q[1]");
  s = table_section();
  s.erase("tiss0");
  expect_input_error(s, "model.tiss0");
  expect_input_error(json(nullptr), "model");
}

TEST(PlatformModel, EmptyTablesRefuseLookups) {
  const auto model = m::PlatformModel::from_json(json::parse(R"({"R_Bps": 1e11, "tiss0": [], "Q": []})"));
  EXPECT_FALSE(model.has_capacity());
  EXPECT_THROW(model.tiss0_s(8, 1000), xs::Error);
  EXPECT_THROW(model.capacity_bytes(8), xs::Error);
}

TEST(PlatformModel, LoadsCalibrationFile) {
  const auto model = xs::fit::load_platform_model(kDataDir + "calibration_ok.json");
  EXPECT_DOUBLE_EQ(model.drain_rate_bps(), 717e9);
  EXPECT_DOUBLE_EQ(model.tiss0_s(148, 4849664).value, 0.76e-6);
  EXPECT_DOUBLE_EQ(model.capacity_bytes(148).value, 4456296);
  EXPECT_TRUE(model.capacity_bytes(8).is_lower_bound);
}

TEST(PlatformModel, FromResultTextIsLoadOnBytesAlreadyRead) {
  // xstage-predict fa-result reads the calibration once and hashes those bytes (its CLI test checks the hash).
  // load() is read_text_file + from_result_text, so the equality below guards the split staying that way; the
  // part that can fail on its own: an error from bytes names the source it was given.
  std::ifstream in(kDataDir + "calibration_ok.json", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  const auto from_text = xs::fit::platform_model_from_result_text(text, "calibration_ok.json");
  EXPECT_EQ(from_text.to_json(), xs::fit::load_platform_model(kDataDir + "calibration_ok.json").to_json());
  try {
    xs::fit::platform_model_from_result_text(text.substr(0, text.size() / 2), "half-read.json");
    ADD_FAILURE() << "a truncated calibration was accepted";
  } catch (const xs::Error& e) {
    EXPECT_EQ(e.code(), xs::ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("half-read.json"), std::string::npos) << e.what();
  }
}

TEST(PlatformModel, LoadsTheDocumentedExample) {
  // docs/example-result.json is the schema's worked example (docs/result-schema.md): it must stay loadable.
  const auto model = xs::fit::load_platform_model(std::string(XS_TEST_DATA_DIR) + "/../../docs/example-result.json");
  EXPECT_GT(model.drain_rate_bps(), 0);
  EXPECT_FALSE(model.tiss0_table().empty());
}

void expect_load_error(const std::string& file, const std::string& needle) {
  try {
    xs::fit::load_platform_model(kDataDir + file);
    ADD_FAILURE() << "loaded " << file;
  } catch (const xs::Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), xs::ExitCode::kBadInput);
    EXPECT_NE(what.find(file), std::string::npos) << what;  // names the file
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    // The file first, the field once: "model: <file>: model: null" read the field twice (hostile-CLI review).
    EXPECT_EQ(what.rfind(kDataDir + file, 0), 0u) << what;
  }
}

TEST(PlatformModel, LoadRefusesBadFiles) {
  expect_load_error("schema_v2.json", "schema.version: major version 2 is not supported");
  expect_load_error("wrong_name.json", "schema.name: expected \"xstage.result\"");
  expect_load_error("model_null.json", "model: null");
  expect_load_error("malformed.json", "malformed or truncated JSON");
  expect_load_error("bad_bound.json", "model.Q[0].bound");
  expect_load_error("missing_R.json", "model.R_Bps");
  expect_load_error("does_not_exist.json", "cannot open");
}

}  // namespace

namespace {

TEST(PlatformModel, NotIdentifiedQRowsAreLeftOutOfTheTable) {
  json s = table_section();
  s["Q"][1] = {{"K", 16}, {"bytes", nullptr}, {"ci95", nullptr}, {"bound", "not_identified"}};
  const auto model = m::PlatformModel::from_json(s);
  ASSERT_EQ(model.capacity_table().size(), 2u);
  EXPECT_EQ(model.unidentified_capacity_k(), std::vector<int>{16});
  // K = 16 now interpolates between K = 8 (1000) and K = 32 (5000, lower bound): as if never measured.
  const auto q = model.capacity_bytes(16);
  EXPECT_DOUBLE_EQ(q.value, 1000 + (16.0 - 8) / (32 - 8) * 4000);
  EXPECT_TRUE(q.is_lower_bound);
  // The round trip keeps the row.
  const auto again = m::PlatformModel::from_json(model.to_json());
  EXPECT_EQ(again.unidentified_capacity_k(), std::vector<int>{16});
  // Nothing identified: no capacity.
  for (auto& row : s["Q"]) row = {{"K", row["K"]}, {"bytes", nullptr}, {"bound", "not_identified"}};
  EXPECT_FALSE(m::PlatformModel::from_json(s).has_capacity());
}

TEST(PlatformModel, NullIntervalsAndFitterDiagnosticsAreRead) {
  json s = table_section();
  s["R_ci95"] = nullptr;
  s["R_bound"] = "lower";
  s["R_constrained"] = true;
  s["tiss0"][0]["ci95"] = nullptr;
  s["tiss0"][0]["source"] = "plateau";
  s["tiss0"][0]["num_plateau_points"] = 3;
  s["Q"][0]["ci95"] = nullptr;
  const auto model = m::PlatformModel::from_json(s);
  EXPECT_EQ(model.drain_rate_bound(), "lower");
  EXPECT_TRUE(model.drain_rate_identified());
  EXPECT_DOUBLE_EQ(model.capacity_bytes(8).value, 1000);
}

TEST(PlatformModel, UnknownKeysAreNamed) {
  json s = table_section();
  s["Rbps"] = 1;
  expect_input_error(s, "model.Rbps");
  s = table_section();
  s["tiss0"][2]["S"] = 1;
  expect_input_error(s, "model.tiss0[2].S");
  s = table_section();
  s["Q"][0]["bound"] = "maybe";
  expect_input_error(s, "model.Q[0].bound");
}

TEST(PlatformModel, RNotIdentifiedIsReadableButCannotBeLoadedForPrediction) {
  json s = table_section();
  s["R_bound"] = "not_identified";
  s["R_Bps"] = nullptr;
  s["R_ci95"] = nullptr;
  EXPECT_FALSE(m::PlatformModel::from_json(s).drain_rate_identified());
  json file = json::parse(R"({"schema": {"name": "xstage.result", "version": "1.0"}, "meta": {}, "config": {},
                              "points": [], "validation": null, "extra": {}})");
  file["model"] = s;
  const std::string path = ::testing::TempDir() + "xs_r_not_identified.json";
  { std::ofstream(path) << file.dump(); }
  try {
    xs::fit::load_platform_model(path);
    ADD_FAILURE() << "loaded a model without R";
  } catch (const xs::Error& e) {
    EXPECT_EQ(e.code(), xs::ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("R not identified by this calibration"), std::string::npos) << e.what();
  }
}

TEST(PlatformModel, CommittedCalibrationsLoad) {
  for (const char* name : {"calibration/calibration-host.json", "gate/calibration-host-run2.json"}) {
    const auto model = xs::fit::load_platform_model(std::string(XS_TEST_DATA_DIR) + "/../../results/h200/" + name);
    EXPECT_GT(model.drain_rate_bps(), 0) << name;
    // Whatever the file's fit identified: identified Q rows are looked up, unidentified ones listed apart.
    std::ifstream in(std::string(XS_TEST_DATA_DIR) + "/../../results/h200/" + name);
    const auto file = nlohmann::json::parse(in);
    std::size_t unidentified = 0;
    for (const auto& row : file.at("model").at("Q")) unidentified += row.at("bound") == "not_identified";
    EXPECT_EQ(model.unidentified_capacity_k().size(), unidentified) << name;
    EXPECT_EQ(model.has_capacity(), unidentified < file.at("model").at("Q").size()) << name;
  }
}

}  // namespace

namespace {
// Q identified at K = 8 only; K = 16 and 32 not identified, with the fitter's evidence.
json bracket_section() {
  return json::parse(R"({
    "R_Bps": 1e10,
    "tiss0": [{"K": 16, "V_bytes": 1e6, "s": 1e-6}, {"K": 32, "V_bytes": 1e6, "s": 2e-6}],
    "Q": [{"K": 8, "bytes": 5e5, "ci95": [4e5, 6e5], "bound": "fit"},
          {"K": 16, "bytes": null, "ci95": null, "bound": "not_identified"},
          {"K": 32, "bytes": null, "ci95": null, "bound": "not_identified"}],
    "fit": {"Q": [{"K": 16, "floor_lower_bound_bytes": 1.0e6, "drain_start_V_bytes": 4.0e6, "note": "x"},
                  {"K": 32, "floor_lower_bound_bytes": 2.0e6, "drain_start_V_bytes": 3.0e6},
                  {"K": 64, "floor_lower_bound_bytes": null}, {"note": "no K"}]}
  })");
}
}  // namespace

TEST(PlatformModelCapacityBracket, FloorsBelowAndIdentifiedRowsBracketAnUnidentifiedQ) {
  const auto model = m::PlatformModel::from_json(bracket_section());
  ASSERT_EQ(model.capacity_evidence().size(), 2u) << "rows without numbers are no evidence";
  // K = 16: floors of K' <= 16 (K=16: 1e6; the identified K=8's ci95 low 4e5). Nothing above: drained bursts bound
  // nothing (a floor point lifted past the knee margin by a per-point offset reads as drained).
  const m::CapacityBracket b16 = model.capacity_bracket(16);
  EXPECT_DOUBLE_EQ(b16.lower_bytes, 1.0e6);
  EXPECT_EQ(b16.lower_from_k, 16);
  EXPECT_TRUE(std::isinf(b16.upper_bytes));
  EXPECT_EQ(b16.upper_from_k, 0);
  // K = 24: K=16's floor below.
  const m::CapacityBracket b24 = model.capacity_bracket(24);
  EXPECT_DOUBLE_EQ(b24.lower_bytes, 1.0e6);
  EXPECT_TRUE(std::isinf(b24.upper_bytes));
  // K = 8: the identified Q's ci95 on both sides.
  const m::CapacityBracket b8 = model.capacity_bracket(8);
  EXPECT_DOUBLE_EQ(b8.lower_bytes, 4e5);
  EXPECT_DOUBLE_EQ(b8.upper_bytes, 6e5);
  // K = 64: every floor below, nothing above.
  const m::CapacityBracket b64 = model.capacity_bracket(64);
  EXPECT_DOUBLE_EQ(b64.lower_bytes, 2.0e6);
  EXPECT_TRUE(std::isinf(b64.upper_bytes));
}

// Where Q(K) is not identified and the drain branch of the largest measured K' <= K (the fitter's
// branch_estimate_bytes) lies below that K's floor, the bracket starts at 0: past the knee the bursts wait behind
// more than the floor allows, by an amount the data do not resolve. A branch above its floor changes nothing; an
// identified Q at K keeps its ci95; a K' without a floor is no contradiction.
// The numbers that set Q's bracket are refused, naming their field, where present and not numbers (they once were
// dropped silently, which changed verdicts: the hostile-CLI review of 2026-12-07 late).
TEST(PlatformModelCapacityBracket, ItsEvidenceIsCheckedWherePresent) {
  for (const char* key : {"floor_lower_bound_bytes", "drain_start_V_bytes", "branch_estimate_bytes"})
    for (const json& bad : {json("1MB"), json(true), json::object()}) {
      json section = bracket_section();
      section["fit"]["Q"][0][key] = bad;
      try {
        (void)m::PlatformModel::from_json(section);
        ADD_FAILURE() << key << " = " << bad.dump() << " was accepted";
      } catch (const xs::Error& e) {
        EXPECT_NE(std::string(e.what()).find(std::string("fit.Q[0].") + key), std::string::npos) << e.what();
      }
    }
  json section = bracket_section();
  section["fit"]["Q"][0]["floor_lower_bound_bytes"] = -5e5;
  EXPECT_THROW((void)m::PlatformModel::from_json(section), xs::Error);
  section["fit"]["Q"][0]["floor_lower_bound_bytes"] = 1e6;
  section["fit"]["Q"][0]["branch_estimate_bytes"] = -5e5;  // the branch's V - R T may be negative (noise): read as 0
  EXPECT_NO_THROW((void)m::PlatformModel::from_json(section));
}

TEST(PlatformModelCapacityBracket, ADrainBranchBelowTheFloorOpensTheLowerEnd) {
  json section = bracket_section();
  section["fit"]["Q"][0]["branch_estimate_bytes"] = 3.0e5;  // K = 16, floor 1e6
  section["fit"]["Q"][1]["branch_estimate_bytes"] = 2.5e6;  // K = 32, above its floor of 2e6
  section["fit"]["Q"].push_back(json::parse(R"({"K": 8, "branch_estimate_bytes": 1e5})"));  // no floor at K = 8
  const auto model = m::PlatformModel::from_json(section);
  ASSERT_EQ(model.capacity_evidence().size(), 3u) << "a branch estimate alone is evidence";
  const m::CapacityBracket b16 = model.capacity_bracket(16);
  EXPECT_DOUBLE_EQ(b16.lower_bytes, 0.0);
  EXPECT_EQ(b16.lower_from_k, 16);
  EXPECT_TRUE(b16.lower_from_drain_branch);
  EXPECT_TRUE(b16.consistent);
  EXPECT_TRUE(std::isinf(b16.upper_bytes));
  // A burst no larger than the floor's bound is smaller than a floor burst measured there: the floor stays.
  const m::CapacityBracket small = model.capacity_bracket(16, 0.9e6);
  EXPECT_DOUBLE_EQ(small.lower_bytes, 1.0e6);
  EXPECT_FALSE(small.lower_from_drain_branch);
  EXPECT_DOUBLE_EQ(model.capacity_bracket(16, 1.1e6).lower_bytes, 0.0);
  // With the file's isolated bursts: a burst past the floor takes the lowest V'' - R_hi T_max of the measured bursts
  // at the largest K' <= K that has bursts, past the floor's bound (1e6) and up to max(2V, the first V'' >= V);
  // R_hi is R's ci95 top (1.1e10 B/s).
  json with_ci = section;
  with_ci["R_ci95"] = {0.9e10, 1.1e10};
  m::PlatformModel with_bursts = m::PlatformModel::from_json(with_ci);
  const std::vector<m::IsolatedBurst> bursts = {{16, 4.0e6, 3.0e-4, 3.5e-4}, {16, 2.0e6, 0.9e-4, 1.2e-4}, {8, 8e6, 1e-4, 1e-4}};
  with_bursts.set_isolated_bursts(bursts);
  const m::CapacityBracket measured = with_bursts.capacity_bracket(24, 1.5e6);  // window (1e6, 3e6]: V'' = 2e6 at K' = 16
  EXPECT_DOUBLE_EQ(measured.lower_bytes, 2.0e6 - 1.1e10 * 1.2e-4);
  EXPECT_EQ(measured.lower_from_k, 16);
  EXPECT_DOUBLE_EQ(measured.lower_from_volume_bytes, 2.0e6);
  EXPECT_TRUE(measured.lower_from_drain_branch);
  EXPECT_DOUBLE_EQ(with_bursts.capacity_bracket(16, 1.1e6).lower_bytes, 2.0e6 - 1.1e10 * 1.2e-4);
  // Window (1e6, 6e6]: both bursts, the lower c (4e6's) wins; and it holds for every larger V up to 4e6.
  EXPECT_DOUBLE_EQ(with_bursts.capacity_bracket(16, 3.0e6).lower_bytes, 4.0e6 - 1.1e10 * 3.5e-4);
  EXPECT_LE(with_bursts.capacity_bracket(16, 4.0e6).lower_bytes, with_bursts.capacity_bracket(16, 3.0e6).lower_bytes);
  EXPECT_DOUBLE_EQ(with_bursts.capacity_bracket(16, 5.0e6).lower_bytes, 0.0) << "past the largest burst measured";
  EXPECT_DOUBLE_EQ(with_bursts.capacity_bracket(16).lower_bytes, 0.0) << "any burst";
  EXPECT_DOUBLE_EQ(with_bursts.capacity_bracket(16, std::nan("")).lower_bytes, 0.0) << "an unknown volume";
  EXPECT_DOUBLE_EQ(with_bursts.capacity_bracket(16, 0.9e6).lower_bytes, 1.0e6) << "on the floor";
  // Two bursts of one (K, V) (two address modes, say): the lower c, whatever their order.
  std::vector<m::IsolatedBurst> twice = bursts;
  twice.push_back({16, 2.0e6, 1.0e-4, 1.5e-4});
  for (int order = 0; order < 2; ++order) {
    with_bursts.set_isolated_bursts(twice);
    EXPECT_DOUBLE_EQ(with_bursts.capacity_bracket(16, 1.5e6).lower_bytes, 2.0e6 - 1.1e10 * 1.5e-4);
    std::reverse(twice.begin(), twice.end());
  }
  with_bursts.set_isolated_bursts({{16, 1.2e6, 1e-5, 1e-5}});  // c = 1.09e6, above the floor's 1e6: the floor stays
  const m::CapacityBracket above = with_bursts.capacity_bracket(16, 1.1e6);
  EXPECT_DOUBLE_EQ(above.lower_bytes, 1.0e6);
  EXPECT_FALSE(above.lower_from_drain_branch);
  EXPECT_DOUBLE_EQ(above.lower_from_volume_bytes, 0.0);
  // R without an interval (here its point only) or only a lower bound: V - R T bounds c from above, not below: 0.
  m::PlatformModel no_interval = model;
  no_interval.set_isolated_bursts(bursts);
  EXPECT_DOUBLE_EQ(no_interval.capacity_bracket(16, 1.5e6).lower_bytes, 0.0);
  json lower_r = with_ci;
  lower_r["R_bound"] = "lower";
  m::PlatformModel r_lower = m::PlatformModel::from_json(lower_r);
  r_lower.set_isolated_bursts(bursts);
  EXPECT_DOUBLE_EQ(r_lower.capacity_bracket(16, 1.5e6).lower_bytes, 0.0);
  const m::CapacityBracket b24 = model.capacity_bracket(24);  // K = 16's branch: the largest measured K' <= 24
  EXPECT_DOUBLE_EQ(b24.lower_bytes, 0.0);
  EXPECT_EQ(b24.lower_from_k, 16);
  const m::CapacityBracket b32 = model.capacity_bracket(32);  // its own branch lies above its floor: floors stay
  EXPECT_DOUBLE_EQ(b32.lower_bytes, 2.0e6);
  EXPECT_FALSE(b32.lower_from_drain_branch);
  const m::CapacityBracket b8 = model.capacity_bracket(8);  // identified at K = 8: its ci95
  EXPECT_DOUBLE_EQ(b8.lower_bytes, 4e5);
  EXPECT_DOUBLE_EQ(b8.upper_bytes, 6e5);
  EXPECT_FALSE(b8.lower_from_drain_branch);
  const m::CapacityBracket b12 = model.capacity_bracket(12);  // K = 8's branch has no floor to contradict
  EXPECT_DOUBLE_EQ(b12.lower_bytes, 4e5);
  EXPECT_FALSE(b12.lower_from_drain_branch);
  section["fit"]["Q"][0]["branch_estimate_bytes"] = -2.4e8;  // a slow launch drives V - R T below zero
  EXPECT_DOUBLE_EQ(m::PlatformModel::from_json(section).capacity_evidence()[1].branch_estimate_bytes, 0.0);
  // The lookup's bracket is the same one.
  const m::Lookup q = model.capacity_bytes(16);
  EXPECT_FALSE(q.usable_as_point);
  EXPECT_DOUBLE_EQ(q.bracket_lo, 0.0);
}

// The upper end past the floor (rule fa_frozen_q_bracket_both_ends): V'' - R_lo T_p10 of the nearest drained burst
// (V'' >= its K''s drain start) at or below V past the floor's bound, at the smallest K' >= K with bursts; only
// where the lower end came from the drain branch, never for an unknown V, never negative, never below the lower end.
TEST(PlatformModelCapacityBracket, TheFastestRepetitionsOfDrainedBurstsBoundItFromAbove) {
  json section = bracket_section();
  section["fit"]["Q"][0]["branch_estimate_bytes"] = 3.0e5;  // K = 16, floor 1e6: the drain branch below it
  section["fit"]["Q"][0]["drain_start_V_bytes"] = 2.0e6;    // K = 16's bursts from 2e6 on drained
  section["fit"]["Q"].push_back(json::parse(R"({"K": 24, "drain_start_V_bytes": 3e6})"));
  section["R_ci95"] = {0.9e10, 1.1e10};
  m::PlatformModel model = m::PlatformModel::from_json(section);
  // A burst past the floor's bound but below its K's drain start issued without backpressure: c ~ V'' bounds Q
  // from below only, so it gives no upper end (adversarial review of 2026-12-08).
  json late_drain = section;
  late_drain["fit"]["Q"][0]["drain_start_V_bytes"] = 4.0e6;
  m::PlatformModel undrained = m::PlatformModel::from_json(late_drain);
  undrained.set_isolated_bursts({{16, 2.0e6, 1.0e-6, 1.2e-6}, {16, 4.0e6, 3.0e-4, 3.5e-4}});
  EXPECT_TRUE(std::isinf(undrained.capacity_bracket(16, 3.0e6).upper_bytes));
  EXPECT_DOUBLE_EQ(undrained.capacity_bracket(16, 4.0e6).upper_from_volume_bytes, 4.0e6);
  json no_start = section;
  no_start["fit"]["Q"][0].erase("drain_start_V_bytes");
  m::PlatformModel unknown_start = m::PlatformModel::from_json(no_start);
  unknown_start.set_isolated_bursts({{16, 2.0e6, 0.9e-4, 1.2e-4}});
  EXPECT_DOUBLE_EQ(unknown_start.capacity_bracket(16, 2.0e6).upper_from_volume_bytes, 0.0) << "no drain start known";
  model.set_isolated_bursts({{16, 2.0e6, 0.9e-4, 1.2e-4}, {16, 4.0e6, 3.0e-4, 3.5e-4}, {24, 3.0e6, 1.0e-4, 2.0e-4}});
  const m::CapacityBracket at2 = model.capacity_bracket(16, 2.0e6);
  EXPECT_DOUBLE_EQ(at2.upper_bytes, 2.0e6 - 0.9e10 * 0.9e-4);
  EXPECT_DOUBLE_EQ(at2.upper_from_volume_bytes, 2.0e6);
  EXPECT_EQ(at2.upper_from_k, 16);
  EXPECT_LE(at2.lower_bytes, at2.upper_bytes);
  EXPECT_TRUE(at2.consistent);
  // At 4e6 both bursts are at or below V: the nearest (4e6: 4e6 - 2.7e6 = 1.3e6), not the lower of the two
  // (2e6's 1.19e6): far past the knee c rises in about half the steps, so only the neighbour is carried.
  const m::CapacityBracket at4 = model.capacity_bracket(16, 4.0e6);
  EXPECT_DOUBLE_EQ(at4.upper_bytes, 4.0e6 - 0.9e10 * 3.0e-4);
  EXPECT_DOUBLE_EQ(at4.upper_from_volume_bytes, 4.0e6);
  EXPECT_DOUBLE_EQ(at4.lower_bytes, 4.0e6 - 1.1e10 * 3.5e-4);
  EXPECT_DOUBLE_EQ(model.capacity_bracket(16, 3.0e6).upper_from_volume_bytes, 2.0e6);  // between: the one below
  // Below every measured burst past the bound, an unknown or unbounded V, on the floor: the upper end unchanged.
  EXPECT_TRUE(std::isinf(model.capacity_bracket(16, 1.5e6).upper_bytes));
  EXPECT_TRUE(std::isinf(model.capacity_bracket(16).upper_bytes));
  EXPECT_TRUE(std::isinf(model.capacity_bracket(16, std::nan("")).upper_bytes));
  EXPECT_TRUE(std::isinf(model.capacity_bracket(16, 0.9e6).upper_bytes));
  EXPECT_DOUBLE_EQ(model.capacity_bracket(16, 0.9e6).upper_from_volume_bytes, 0.0);
  // A K between measured ones takes the bursts of the smallest K' >= K (Q does not fall with K): K = 20 -> 24.
  const m::CapacityBracket at20 = model.capacity_bracket(20, 3.5e6);
  EXPECT_EQ(at20.upper_from_k, 24);
  EXPECT_DOUBLE_EQ(at20.upper_bytes, 3.0e6 - 0.9e10 * 1.0e-4);
  // Two bursts at the nearest V (two address modes): the higher c_hi, whatever their order.
  std::vector<m::IsolatedBurst> two = {{16, 2.0e6, 0.9e-4, 1.2e-4}, {16, 2.0e6, 0.5e-4, 1.2e-4}};
  for (int order = 0; order < 2; ++order) {
    model.set_isolated_bursts(two);
    EXPECT_DOUBLE_EQ(model.capacity_bracket(16, 2.0e6).upper_bytes, 2.0e6 - 0.9e10 * 0.5e-4);
    std::reverse(two.begin(), two.end());
  }
  // A burst whose fastest repetitions drained nearly all of it: c_hi small, [0, c_hi] still consistent.
  model.set_isolated_bursts({{16, 2.0e6, 2.2e-4, 3.0e-4}});
  const m::CapacityBracket nearly = model.capacity_bracket(16, 2.0e6);
  EXPECT_DOUBLE_EQ(nearly.lower_bytes, 0.0);
  EXPECT_NEAR(nearly.upper_bytes, 2.0e6 - 0.9e10 * 2.2e-4, 1e-6);
  EXPECT_TRUE(nearly.consistent);
  // One slower than draining all of it at R_lo even in its fastest repetitions (c_hi < 0): the model does not hold
  // at that burst, and it bounds nothing (the upper end stays +inf).
  model.set_isolated_bursts({{16, 2.0e6, 3.0e-4, 4.0e-4}});
  const m::CapacityBracket slow = model.capacity_bracket(16, 2.0e6);
  EXPECT_TRUE(std::isinf(slow.upper_bytes));
  EXPECT_DOUBLE_EQ(slow.upper_from_volume_bytes, 0.0);
  EXPECT_DOUBLE_EQ(slow.lower_bytes, 0.0);
  EXPECT_TRUE(slow.consistent);
  // R without an interval: no bound from the bursts (V - R T with R's point is not an interval end).
  json no_ci = section;
  no_ci["R_ci95"] = nullptr;
  m::PlatformModel point_r = m::PlatformModel::from_json(no_ci);
  point_r.set_isolated_bursts({{16, 2.0e6, 0.9e-4, 1.2e-4}});
  EXPECT_DOUBLE_EQ(point_r.capacity_bracket(16, 2.0e6).upper_from_volume_bytes, 0.0);
  // Where the drain branch does not lie below the floor (K = 32's own, above its floor), the bursts bound nothing
  // from above.
  section["fit"]["Q"][1]["branch_estimate_bytes"] = 2.5e6;
  m::PlatformModel above_floor = m::PlatformModel::from_json(section);
  above_floor.set_isolated_bursts({{32, 4.0e6, 1.0e-4, 1.0e-4}});
  EXPECT_DOUBLE_EQ(above_floor.capacity_bracket(32, 4.0e6).upper_from_volume_bytes, 0.0);
}

// An identified Q at a larger K bounds a smaller K's Q from above (Q nondecreasing in K); a drained burst, however
// tight, does not. A floor above that bound is a contradiction: no bracket.
TEST(PlatformModelCapacityBracket, OnlyIdentifiedRowsBoundFromAboveAndContradictionsAreNotBounds) {
  json section = bracket_section();
  section["fit"]["Q"][1]["drain_start_V_bytes"] = 1.0e6 + 1;  // K = 32 drained just above K = 16's floor
  EXPECT_TRUE(std::isinf(m::PlatformModel::from_json(section).capacity_bracket(16).upper_bytes));
  section["Q"][2] = json::parse(R"({"K": 32, "bytes": 3e6, "ci95": [2.5e6, 3.5e6], "bound": "fit"})");
  const m::CapacityBracket b = m::PlatformModel::from_json(section).capacity_bracket(16);
  EXPECT_DOUBLE_EQ(b.upper_bytes, 3.5e6);
  EXPECT_EQ(b.upper_from_k, 32);
  EXPECT_TRUE(b.consistent);
  section["Q"][2]["bytes"] = 0.7e6;  // below K = 16's floor of 1e6, with its interval
  section["Q"][2]["ci95"] = {0.5e6, 0.9e6};
  const auto model = m::PlatformModel::from_json(section);
  EXPECT_FALSE(model.capacity_bracket(16).consistent);
  EXPECT_TRUE(model.capacity_bracket(8).consistent);
}
