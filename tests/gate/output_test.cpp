// xstage gate tests: the readable table (units, short labels, --only-failures, summary counts), the
// CSV/Markdown comparison tables, and the provenance warnings (backend, target, device, schema).
#include <gtest/gtest.h>

#include "xs/gate/gate_output.hpp"
#include "xs/gate/provenance.hpp"
#include "xs/report/result_file.hpp"

namespace xs::gate {
namespace {
using nlohmann::json;

struct Fixture {
  GateConfig config = read_gate_config(XS_TEST_DATA_DIR "/gate/gate.json");
  json baseline = report::to_json(report::read_result_file(XS_TEST_DATA_DIR "/gate/baseline.json"));
  json regressed = report::to_json(report::read_result_file(XS_TEST_DATA_DIR "/gate/candidate_regressed.json"));
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) out.push_back(text.substr(start, nl - start));
  return out;
}

TEST(Output, TableShowsUnitsAndShortLabels) {
  Fixture f;
  const GateReport r = compare(f.baseline, f.regressed, f.config);
  const std::string table = format_table(r, f.config);
  EXPECT_NE(table.find("717 GB/s"), std::string::npos) << table;  // model.R_Bps baseline
  EXPECT_NE(table.find("645 GB/s"), std::string::npos) << table;
  EXPECT_NE(table.find("-72.0 GB/s"), std::string::npos) << table;
  EXPECT_NE(table.find("-10.04%"), std::string::npos) << table;
  EXPECT_NE(table.find("periodic K=132 B=32KiB G=2us"), std::string::npos) << table;
  EXPECT_NE(table.find(" us "), std::string::npos) << table;          // point times in microseconds
  EXPECT_EQ(table.find("{"), std::string::npos) << table;             // no JSON in labels
  EXPECT_NE(table.find("not testable (n=3/3)"), std::string::npos) << table;
}

TEST(Output, OnlyFailuresKeepsWorseAndMissingRowsAndTheFullSummary) {
  Fixture f;
  const GateReport r = compare(f.baseline, f.regressed, f.config);
  const auto all = lines_of(format_table(r, f.config));
  const auto failing = lines_of(format_table(r, f.config, {true}));
  const std::size_t failures = r.count(Status::kWorse) + r.count(Status::kMissing);
  ASSERT_GT(failures, 0u);
  ASSERT_LT(failures, r.rows.size());
  EXPECT_EQ(all.size(), 1 + r.rows.size() + 1);  // header, rows, summary
  EXPECT_EQ(failing.size(), 1 + failures + 1);
  for (std::size_t i = 1; i + 1 < failing.size(); ++i) {
    EXPECT_TRUE(failing[i].rfind("WORSE", 0) == 0 || failing[i].rfind("MISSING", 0) == 0) << failing[i];
  }
  EXPECT_EQ(failing.back(), all.back());  // the summary counts every row either way
  EXPECT_EQ(all.back(), summary_line(r));
  const GateReport same = compare(f.baseline, f.baseline, f.config);
  EXPECT_EQ(lines_of(format_table(same, f.config, {true})).front(), "no failing rows");
}

TEST(Output, SummaryLineCounts) {
  GateReport r;
  for (Status s : {Status::kSame, Status::kSame, Status::kWorse, Status::kNoise, Status::kMissing}) {
    Comparison c;
    c.status = s;
    r.rows.push_back(c);
  }
  EXPECT_EQ(summary_line(r),
            "FAIL: 2 failing (5 rows: 1 WORSE, 1 MISSING, 1 NOISE, 2 SAME); WORSE and MISSING fail the gate");
  r.rows.erase(r.rows.begin() + 2);
  r.rows.pop_back();
  r.warnings = {"device UUID differs: baseline a, candidate b"};
  EXPECT_EQ(summary_line(r), "PASS (3 rows: 1 NOISE, 2 SAME); WORSE and MISSING fail the gate; 1 WARNING: "
                             "baseline and candidate differ in provenance");
}

TEST(Output, CsvHasRawSiNumbersAndUnits) {
  Fixture f;
  const GateReport r = compare(f.baseline, f.regressed, f.config);
  const std::string csv = report::to_csv(comparison_table(r, f.config, false));
  const auto lines = lines_of(csv);
  ASSERT_EQ(lines.size(), 1 + r.rows.size());
  EXPECT_EQ(lines[0], "verdict,metric,instance,baseline,candidate,unit,delta,rel_delta,tolerance,p_value,n_baseline,"
                      "n_candidate,ci95_overlap,note");
  EXPECT_EQ(lines[1].rfind("WORSE,model.R_Bps,,7.17e+11,6.45e+11,B/s,-7.2e+10,-0.100418410041841,2.151e+10,,,,yes,", 0), 0u) << lines[1];
  EXPECT_NE(csv.find(",s,"), std::string::npos);  // seconds for the point times
}

TEST(Output, MarkdownIsTheReadableTable) {
  Fixture f;
  const GateReport r = compare(f.baseline, f.regressed, f.config);
  const std::string md = report::to_markdown(comparison_table(r, f.config, true, {true}));
  const auto lines = lines_of(md);
  ASSERT_EQ(lines.size(), 2 + r.count(Status::kWorse) + r.count(Status::kMissing));
  EXPECT_EQ(lines[0].rfind("| verdict | metric | instance | baseline | candidate |", 0), 0u) << lines[0];
  EXPECT_NE(md.find("| 717 GB/s | 645 GB/s |"), std::string::npos) << md;
}

TEST(Output, JsonCarriesPValuesWarningsAndUnits) {
  Fixture f;
  GateReport r = compare(f.baseline, f.regressed, f.config);
  r.warnings = {"backend differs: baseline gpu, candidate sim"};
  const json j = report_to_json(r, f.config);
  EXPECT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["alpha"], 0.05);
  EXPECT_EQ(j["rows"][0]["unit"], "B/s");
  EXPECT_TRUE(j["rows"][0]["p_value"].is_null());
  EXPECT_EQ(j["rows"][0]["ci95_overlap"], true);  // the fixture's candidate kept R_ci95 [709, 724] GB/s
  EXPECT_EQ(j["rows"][0]["status"], "WORSE");
}

TEST(Provenance, DifferencesAreNamed) {
  const json raw_b = report::read_json_file(XS_TEST_DATA_DIR "/gate/baseline.json");
  const json raw_c = report::read_json_file(XS_TEST_DATA_DIR "/gate/candidate_other_device.json");
  const Provenance b = provenance_of(raw_b, report::to_json(report::result_from_json(raw_b)), "b.json");
  const Provenance c = provenance_of(raw_c, report::to_json(report::result_from_json(raw_c)), "c.json");
  EXPECT_EQ(b.backend, "gpu");
  EXPECT_EQ(b.target, "peer:1");
  EXPECT_EQ(b.device_name, "NVIDIA H200");
  EXPECT_TRUE(provenance_warnings(b, b).empty());
  const auto w = provenance_warnings(b, c);
  ASSERT_EQ(w.size(), 3u);  // backend, device name, device UUID; 1.0 vs 1.3 is one major version
  EXPECT_EQ(w[0], "backend differs: baseline gpu, candidate sim");
  EXPECT_EQ(w[1], "device name differs: baseline NVIDIA H200, candidate NVIDIA H100 80GB HBM3");
  EXPECT_EQ(w[2], "device UUID differs: baseline (none), candidate GPU-00000000-1111-2222-3333-444444444444");
  Provenance other_major = b;
  other_major.schema_version = "2.0";
  other_major.target = "host";
  const auto v = provenance_warnings(b, other_major);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], "target differs: baseline peer:1, candidate host");
  EXPECT_EQ(v[1], "schema major version differs: baseline 1.0, candidate 2.0");
}

}  // namespace
}  // namespace xs::gate
