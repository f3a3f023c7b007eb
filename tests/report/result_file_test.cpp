// xstage report tests: result-file round trips and the strict reader's error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "xs/common/error.hpp"
#include "fixtures.hpp"

namespace xs {
namespace {
using nlohmann::json;

json canonical() { return report::to_json(test::sample_file()); }

// The field of the input_error `fn` throws, or "<no error>".
std::string error_field(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
    return e.field();
  }
  return "<no error>";
}

TEST(ResultFile, RoundTripIsExact) {
  const json first = canonical();
  const report::ResultFile back = report::parse_result_text(first.dump(1), "mem");
  ASSERT_EQ(back.points.size(), 3u);
  EXPECT_EQ(report::to_json(back), first);
  EXPECT_TRUE(back.points[1].completion_s.has_value());
  EXPECT_FALSE(back.points[0].completion_s.has_value());
  EXPECT_TRUE(back.points[2].skipped);
  EXPECT_EQ(back.points[2].skip_reason, "unavailable: one GPU");
  EXPECT_DOUBLE_EQ(back.points[1].spec.gap_s, 2e-6);
  EXPECT_EQ(back.points[0].issue_time_s.samples, test::sample_record().issue_time_s.samples);
  EXPECT_EQ(first["schema"], json::parse(R"({"name": "xstage.result", "version": "1.0"})"));
}

TEST(ResultFile, DocumentedExampleReadsBack) {
  const report::ResultFile f = report::read_result_file(XS_TEST_DATA_DIR "/../../docs/example-result.json");
  ASSERT_EQ(f.points.size(), 3u);
  EXPECT_EQ(f.points[0].spec.num_producers, 132);
  EXPECT_TRUE(f.points[2].skipped);
  EXPECT_DOUBLE_EQ(f.model["R_Bps"].get<double>(), 7.17e11);
}

TEST(ResultFile, NullOptionalSectionsMeanAbsent) {
  json j = canonical();
  j["points"][0]["prediction"] = nullptr;
  j["points"][0]["completion_s"] = nullptr;
  const report::ResultFile f = report::result_from_json(j);
  EXPECT_FALSE(f.points[0].prediction.has_value());
  EXPECT_FALSE(f.points[0].completion_s.has_value());
}

struct BadCase {
  std::string name;
  std::function<void(json&)> mutate;
  std::string field;
};

TEST(ResultFile, EveryBadInputNamesItsPath) {
  const std::vector<BadCase> cases = {
      {"B zero", [](json& j) { j["points"][1]["spec"]["B_bytes"] = 0; }, "points[1].spec.B_bytes"},
      {"B negative", [](json& j) { j["points"][1]["spec"]["B_bytes"] = -32; }, "points[1].spec.B_bytes"},
      {"B not 16-multiple", [](json& j) { j["points"][1]["spec"]["B_bytes"] = 24; }, "points[1].spec.B_bytes"},
      {"B float", [](json& j) { j["points"][1]["spec"]["B_bytes"] = 32.0; }, "points[1].spec.B_bytes"},
      {"B string", [](json& j) { j["points"][1]["spec"]["B_bytes"] = "32KiB"; }, "points[1].spec.B_bytes"},
      {"K zero", [](json& j) { j["points"][0]["spec"]["K"] = 0; }, "points[0].spec.K"},
      {"K beyond int", [](json& j) { j["points"][0]["spec"]["K"] = 10000000000ll; }, "points[0].spec.K"},
      {"K huge unsigned", [](json& j) { j["points"][0]["spec"]["K"] = 18446744073709551615ull; }, "points[0].spec.K"},
      {"G missing", [](json& j) { j["points"][0]["spec"].erase("G_s"); }, "points[0].spec.G_s"},
      {"G negative", [](json& j) { j["points"][0]["spec"]["G_s"] = -1e-6; }, "points[0].spec.G_s"},
      {"unknown spec key", [](json& j) { j["points"][0]["spec"]["gap_ns"] = 5; }, "points[0].spec.gap_ns"},
      {"unknown top key", [](json& j) { j["devices"] = json::array(); }, "devices"},
      {"unknown point key", [](json& j) { j["points"][2]["median"] = 1; }, "points[2].median"},
      {"schema name", [](json& j) { j["schema"]["name"] = "xstage.sweep"; }, "schema.name"},
      {"schema major", [](json& j) { j["schema"]["version"] = "2.0"; }, "schema.version"},
      {"schema version form", [](json& j) { j["schema"]["version"] = "1"; }, "schema.version"},
      {"schema version spaced", [](json& j) { j["schema"]["version"] = "1. 0"; }, "schema.version"},
      {"schema version signed", [](json& j) { j["schema"]["version"] = "1.-0"; }, "schema.version"},
      {"schema version number", [](json& j) { j["schema"]["version"] = 1.0; }, "schema.version"},
      {"schema missing", [](json& j) { j.erase("schema"); }, "schema"},
      {"points not array", [](json& j) { j["points"] = json::object(); }, "points"},
      {"sample wrong type", [](json& j) { j["points"][0]["issue_time_s"]["samples"][1] = "4us"; },
       "points[0].issue_time_s.samples[1]"},
      {"median negative", [](json& j) { j["points"][0]["period_s"]["median"] = -1.0; }, "points[0].period_s.median"},
      {"summary key missing", [](json& j) { j["points"][1]["completion_s"].erase("p90"); }, "points[1].completion_s.p90"},
      {"wrong negative", [](json& j) { j["points"][0]["verification"]["wrong"] = -1; }, "points[0].verification.wrong"},
      {"skip without reason", [](json& j) { j["points"][2]["skip_reason"] = ""; }, "points[2].skip_reason"},
      {"target unknown", [](json& j) { j["points"][0]["spec"]["target"] = "gpu1"; }, "points[0].spec.target"},
      {"target bad index", [](json& j) { j["points"][0]["spec"]["target"] = "peer:x"; }, "points[0].spec.target"},
      {"suite unknown", [](json& j) { j["points"][0]["spec"]["suite"] = "burst"; }, "points[0].spec.suite"},
      {"store width", [](json& j) { j["points"][0]["spec"]["store_width_bytes"] = 12; }, "points[0].spec.store_width_bytes"},
      {"completion not bool", [](json& j) { j["points"][0]["spec"]["completion"] = 1; }, "points[0].spec.completion"},
      {"clock missing", [](json& j) { j["points"][1].erase("sm_clock_hz"); }, "points[1].sm_clock_hz"},
      {"prediction key", [](json& j) { j["points"][0]["prediction"]["T_iss"] = 1; }, "points[0].prediction.T_iss"},
      {"meta not object", [](json& j) { j["meta"] = json::array(); }, "meta"},
      {"model wrong type", [](json& j) { j["model"] = 3; }, "model"},
      {"extra missing", [](json& j) { j.erase("extra"); }, "extra"},
      {"document not object", [](json& j) { j = json::array(); }, "(document)"},
  };
  for (const BadCase& c : cases) {
    json j = canonical();
    c.mutate(j);
    EXPECT_EQ(error_field([&] { report::result_from_json(j); }), c.field) << c.name;
    // The same through text, where the file name joins the message but the field stays the JSON path.
    EXPECT_EQ(error_field([&] { report::parse_result_text(j.dump(), "f.json"); }), c.field) << c.name;
  }
}

TEST(ResultFile, MalformedTextIsAnErrorNamingTheSource) {
  const std::string good = canonical().dump(1);
  const std::vector<std::string> texts = {
      "",
      good.substr(0, good.size() / 2),                       // truncated
      good + " x",                                           // trailing garbage
      R"({"schema": {"name": "xstage.result", "name": "xstage.result", "version": "1.0"}})",  // duplicate key
      std::string(200, '[') + std::string(200, ']'),         // too deep
      R"({"a": 1e999})",                                     // overflows to inf
  };
  for (const std::string& text : texts) {
    EXPECT_EQ(error_field([&] { report::parse_result_text(text, "in.json"); }), "in.json") << text.substr(0, 60);
  }
}

TEST(ResultFile, NewerMinorVersionIsAccepted) {
  json j = canonical();
  j["schema"]["version"] = "1.7";
  EXPECT_EQ(report::result_from_json(j).points.size(), 3u);
}

TEST(ResultFile, MissingFileIsBadInput) {
  EXPECT_EQ(error_field([] { report::read_result_file("/nonexistent/xs.json"); }), "/nonexistent/xs.json");
}

TEST(ResultFile, WriterRefusesWhatTheReaderRefuses) {
  report::ResultFile f = test::sample_file();
  f.points[1].issue_time_s.median = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(error_field([&] { report::to_json(f); }), "points[1].issue_time_s.median");
  f = test::sample_file();
  f.points[0].spec.bytes_per_producer = 0;
  EXPECT_EQ(error_field([&] { report::to_json(f); }), "points[0].spec.B_bytes");
  f = test::sample_file();
  f.model["R_Bps"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_field([&] { report::to_json(f); }), "model.R_Bps");
  f = test::sample_file();
  f.points[0].prediction->period_s = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_field([&] { report::to_json(f.points[0]); }), "prediction.period_s");
}

}  // namespace
}  // namespace xs
