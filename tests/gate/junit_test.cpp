// xstage gate tests: JUnit XML is well-formed and escaped, with one testcase per compared instance
// and failures exactly for WORSE and MISSING; the table and JSON renderings agree on the verdict.
#include <gtest/gtest.h>

#include "xs/gate/gate_output.hpp"
#include "xs/report/result_file.hpp"
#include "xml_check.hpp"

namespace xs::gate {
namespace {
using nlohmann::json;

struct Fixture {
  GateConfig config = read_gate_config(XS_TEST_DATA_DIR "/gate/gate.json");
  json baseline = report::to_json(report::read_result_file(XS_TEST_DATA_DIR "/gate/baseline.json"));
  json regressed = report::to_json(report::read_result_file(XS_TEST_DATA_DIR "/gate/candidate_regressed.json"));
};

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(JUnit, WellFormedWithFailuresForWorseAndMissing) {
  Fixture f;
  const GateReport r = compare(f.baseline, f.regressed, f.config);
  const std::string xml = to_junit_xml(r, f.config);
  EXPECT_EQ(test::xml_problem(xml), "") << xml;
  EXPECT_EQ(occurrences(xml, "<testcase "), r.rows.size());
  EXPECT_EQ(occurrences(xml, "<failure "), r.count(Status::kWorse) + r.count(Status::kMissing));
  EXPECT_EQ(occurrences(xml, "<testsuite "), f.config.metrics.size());
  EXPECT_GT(r.count(Status::kMissing), 0u);
  EXPECT_GT(r.count(Status::kWorse), 0u);
  EXPECT_NE(xml.find("type=\"MISSING\""), std::string::npos);
}

TEST(JUnit, HostileIdsAreEscaped) {
  Fixture f;
  // The instance label shows the suite: make it hostile (compare() takes any JSON).
  const std::string suite = "remote_store.<periodic>&\"host\"'\x01\xEF\xBF\xBF";
  for (json* doc : {&f.baseline, &f.regressed}) {
    for (json& p : (*doc)["points"]) p["spec"]["suite"] = suite;
  }
  const std::string xml = to_junit_xml(compare(f.baseline, f.regressed, f.config), f.config);
  EXPECT_EQ(test::xml_problem(xml), "") << xml;
  EXPECT_NE(xml.find("remote_store.&lt;periodic&gt;&amp;&quot;host&quot;&apos;??"), std::string::npos) << xml;
}

TEST(JUnit, XmlEscape) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("tab\tnl\nbell\x07"), "tab\tnl\nbell?");
  EXPECT_EQ(xml_escape("\xC3\xA9"), "\xC3\xA9");  // é passes through
}

TEST(Render, TableAndJsonCarryTheVerdict) {
  Fixture f;
  const GateReport r = compare(f.baseline, f.regressed, f.config);
  const std::string table = format_table(r, f.config);
  EXPECT_NE(table.find("FAIL"), std::string::npos);
  EXPECT_NE(table.find("MISSING"), std::string::npos);
  EXPECT_NE(table.find("BETTER"), std::string::npos);  // validation error improved
  const json j = report_to_json(r, f.config);
  EXPECT_FALSE(j["passed"].get<bool>());
  EXPECT_EQ(j["rows"].size(), r.rows.size());
  EXPECT_EQ(j["counts"]["MISSING"], r.count(Status::kMissing));
  const GateReport same = compare(f.baseline, f.baseline, f.config);
  EXPECT_NE(format_table(same, f.config).find("PASS"), std::string::npos);
  EXPECT_TRUE(report_to_json(same, f.config)["passed"].get<bool>());
}

}  // namespace
}  // namespace xs::gate
