// xstage cli tests: fa-score's calibration_predates_data compares instants, not text (review of issue 31): a
// missing or malformed calibration date is unknown (null), never "predates", and a UTC offset is honoured.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace xs::test {
namespace {

const std::string kFaDir = std::string(XS_TEST_DATA_DIR) + "/../../results/h200/fa_a2a/3238301-bars/results";
const std::string kFa = kFaDir + "/fa-a2a-host.json";               // measured 2026-12-02T13:51:32Z
const std::string kFaCal = kFaDir + "/calibration-host-small-k.json";  // measured 2026-12-02T13:50:43Z

// calibration_predates_data of every row of fa-score on kFa with kFaCal whose meta.date_utc is `date` (erased
// when null); all rows must agree, and that value is returned.
nlohmann::json predates_with(const Scratch& s, const nlohmann::json& date, const std::string& stem) {
  nlohmann::json cal = nlohmann::json::parse(read_file(kFaCal));
  if (date.is_null()) cal["meta"].erase("date_utc");
  else cal["meta"]["date_utc"] = date;
  { std::ofstream(s.path(stem + ".json")) << cal.dump(); }
  const ToolRun r = s.run("xstage-predict", "fa-score " + kFa + " --model " + stem + ".json --out " + stem + "-score.json");
  EXPECT_EQ(r.rc, 0) << r.err;
  if (r.rc != 0) return "failed";
  const nlohmann::json out = nlohmann::json::parse(read_file(s.path(stem + "-score.json")));
  EXPECT_FALSE(out.at("rows").empty());
  const nlohmann::json first = out.at("rows").at(0).at("calibration_predates_data");
  for (const auto& row : out.at("rows")) EXPECT_EQ(row.at("calibration_predates_data"), first) << stem;
  return first;
}

TEST(FaScoreDates, PredatesIsAComparisonOfInstants) {
  Scratch s;
  EXPECT_EQ(predates_with(s, "2026-12-02T13:50:43Z", "as_recorded"), true);
  EXPECT_TRUE(predates_with(s, nullptr, "missing").is_null());
  EXPECT_TRUE(predates_with(s, "yesterday", "malformed").is_null());
  EXPECT_TRUE(predates_with(s, "2026-12-02 13:50:43", "no_zone").is_null());
  EXPECT_TRUE(predates_with(s, "2026-13-02T13:50:43Z", "no_such_month").is_null());
  // 13:50:43Z written at +01:00: as text it sorts after the data's 13:51:32Z, as an instant it is before.
  EXPECT_EQ(predates_with(s, "2026-12-02T14:50:43+01:00", "east"), true);
  // 13:52:00Z written at -01:00: as text it sorts before the data, as an instant it is after.
  EXPECT_EQ(predates_with(s, "2026-12-02T12:52:00-01:00", "west"), false);
}

}  // namespace
}  // namespace xs::test
