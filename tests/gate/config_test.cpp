// xstage gate tests: the gate config reader refuses bad configs naming the field, and the metric-path
// grammar.
#include <gtest/gtest.h>

#include "xs/common/error.hpp"
#include "xs/gate/gate_config.hpp"

namespace xs::gate {
namespace {
using nlohmann::json;

json config_with(const json& metric) {
  return {{"schema", {{"name", "xstage.gate"}, {"version", "1.0"}}}, {"metrics", json::array({metric})}};
}

std::string error_field(const json& j) {
  try {
    gate_config_from_json(j);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.field();
  }
  return "<no error>";
}

TEST(GateConfig, ReadsTheShippedCalibrationConfig) {
  const GateConfig config = read_gate_config(XS_TEST_DATA_DIR "/../../configs/gate/calibration.json");
  ASSERT_GE(config.metrics.size(), 4u);
  EXPECT_EQ(config.metrics[0].name, "model.R_Bps");
  EXPECT_EQ(config.metrics[0].direction, Direction::kEither);
  const MetricSpec& tiss0 = config.metrics[1];
  EXPECT_TRUE(tiss0.has_wildcard);
  EXPECT_EQ(tiss0.match_by_names, (std::vector<std::string>{"K", "V_bytes"}));
}

TEST(GateConfig, PointsDefaultToIdAndSpecMatching) {
  const GateConfig c = gate_config_from_json(
      config_with({{"name", "points[*].issue_time_s.median"}, {"direction", "lower"}, {"rel_tol", 0.05}}));
  EXPECT_EQ(c.metrics[0].match_by_names, (std::vector<std::string>{"id", "spec"}));
  EXPECT_EQ(c.metrics[0].prefix.size(), 1u);
  EXPECT_EQ(c.metrics[0].suffix.size(), 2u);
  EXPECT_DOUBLE_EQ(c.metrics[0].abs_tol, 0.0);
}

TEST(GateConfig, BadConfigsNameTheField) {
  const json ok = {{"name", "model.R_Bps"}, {"direction", "higher"}, {"rel_tol", 0.05}};
  auto with = [&](const char* key, const json& value) {
    json m = ok;
    m[key] = value;
    return config_with(m);
  };
  EXPECT_EQ(error_field(with("direction", "up")), "metrics[0].direction");
  EXPECT_EQ(error_field(with("direction", 1)), "metrics[0].direction");
  EXPECT_EQ(error_field(with("rel_tol", -0.1)), "metrics[0].rel_tol");
  EXPECT_EQ(error_field(with("abs_tol", -1)), "metrics[0].abs_tol");
  EXPECT_EQ(error_field(with("abs_tol", "1%")), "metrics[0].abs_tol");
  EXPECT_EQ(error_field(with("tolerance", 0.1)), "metrics[0].tolerance");
  EXPECT_EQ(error_field(with("optional", "yes")), "metrics[0].optional");
  EXPECT_EQ(error_field(with("match_by", json::array({"K"}))), "metrics[0].match_by");  // no [*]
  EXPECT_EQ(error_field(config_with({{"name", "model.R_Bps"}, {"direction", "lower"}})), "metrics[0]");
  EXPECT_EQ(error_field(config_with({{"name", "model.Q[*].bytes"}, {"direction", "lower"}, {"abs_tol", 0}})),
            "metrics[0].match_by");
  json two = config_with(ok);
  two["metrics"].push_back(ok);
  EXPECT_EQ(error_field(two), "metrics[1].name");
  json empty = config_with(ok);
  empty["metrics"] = json::array();
  EXPECT_EQ(error_field(empty), "metrics");
  json unknown_top = config_with(ok);
  unknown_top["tolerances"] = json::object();
  EXPECT_EQ(error_field(unknown_top), "tolerances");
  json other_schema = config_with(ok);
  other_schema["schema"]["name"] = "xstage.result";
  EXPECT_EQ(error_field(other_schema), "schema.name");
  other_schema["schema"] = {{"name", "xstage.gate"}, {"version", "3.0"}};
  EXPECT_EQ(error_field(other_schema), "schema.version");
}

TEST(GateConfig, MetricPathGrammar) {
  for (const char* bad : {"", ".a", "a.", "a..b", "a[", "a[]", "a[x]", "a[*]b", "a[*].b[*].c", "9a", "a-b",
                          "a[1234567890]"}) {
    try {
      parse_metric_path(bad, "metrics[0].name", true);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), "metrics[0].name");
    }
  }
  const MetricPath p = parse_metric_path("model.R_ci95[1]", "f", true);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[2].kind, PathStep::Kind::kIndex);
  EXPECT_EQ(p[2].index, 1u);
  EXPECT_THROW(parse_metric_path("points[*].x", "f", false), Error);
  const json doc = json::parse(R"({"model": {"R_ci95": [1, 2]}})");
  EXPECT_EQ(*resolve_path(doc, p), 2);
  EXPECT_EQ(resolve_path(doc, parse_metric_path("model.R_ci95[2]", "f", false)), nullptr);
  EXPECT_EQ(resolve_path(doc, parse_metric_path("model.R_ci95.x", "f", false)), nullptr);
}

}  // namespace
}  // namespace xs::gate
