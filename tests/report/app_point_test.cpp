// Tests for report/app_point: application-suite points round-trip through JSON and the result file's
// points[] (beside micro-benchmark points), and the strict reader names what it refuses.
#include "xs/report/app_point.hpp"

#include <gtest/gtest.h>

#include "xs/common/error.hpp"
#include "xs/report/result_file.hpp"

namespace xs::report {
namespace {
using nlohmann::json;

AppPoint sample_point() {
  AppPoint p;
  p.id = "fa_a2a.host";
  p.suite = "fa_a2a";
  p.axes = {{"M", 8192}, {"target", "host"}, {"verify", true}};
  p.variants["fa"] = summarize({1e-3, 1.1e-3, 0.9e-3});
  p.paired["fused_minus_fa"] = summarize({-1e-6, 2e-6, 1e-6});
  p.verification = {true, true, "", {{"rel_error", 1e-3}}};
  p.prediction = {{"E_drain_s", 2e-6}, {"verdict", "piggyback"}};
  p.extra = {{"measured", {{"H", 0.97}}}};
  return p;
}

std::string field_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.field();
  }
  return "(accepted)";
}

TEST(AppPoint, RoundTripsThroughJson) {
  const AppPoint p = sample_point();
  const json j = to_json(p);
  EXPECT_TRUE(is_app_point_json(j));
  const AppPoint back = app_point_from_json(j, "p");
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.paired.at("fused_minus_fa").min, -1e-6) << "paired differences keep their sign";
}

TEST(AppPoint, ResultFileHoldsBothKindsOfPoints) {
  ResultFile f;
  PointRecord micro;
  micro.id = "remote_store.periodic.host";
  micro.spec.bytes_per_producer = 1024;
  f.points.push_back(micro);
  f.app_points.push_back(sample_point());
  const json j = to_json(f);
  ASSERT_EQ(j["points"].size(), 2u);
  const ResultFile back = result_from_json(j);
  EXPECT_EQ(back.points.size(), 1u);
  ASSERT_EQ(back.app_points.size(), 1u);
  EXPECT_EQ(back.app_points[0].prediction["verdict"], "piggyback");
  f.app_points.push_back(sample_point());
  EXPECT_EQ(field_of([&] { to_json(f); }), "points[2]") << "two points of one id and axes";
}

TEST(AppPoint, StrictReaderNamesTheField) {
  const json good = to_json(sample_point());
  struct Case {
    const char* name;
    std::function<void(json&)> edit;
    const char* field;
  };
  const Case cases[] = {
      {"unknown key", [](json& j) { j["spec"] = json::object(); }, "points[0].spec"},
      {"negative time", [](json& j) { j["variants"]["fa"]["samples"][0] = -1.0; }, "points[0].variants.fa.samples[0]"},
      {"bad status", [](json& j) { j["status"] = "meh"; }, "points[0].status"},
      {"skipped without reason", [](json& j) { j["status"] = "skipped"; }, "points[0].reason"},
      {"missing verification", [](json& j) { j.erase("verification"); }, "points[0].verification"},
      {"prediction not an object", [](json& j) { j["prediction"] = 3; }, "points[0].prediction"},
  };
  for (const auto& c : cases) {
    json j = good;
    c.edit(j);
    EXPECT_EQ(field_of([&] { app_point_from_json(j, "points[0]"); }), c.field) << c.name;
  }
  AppPoint p = sample_point();
  p.status = "failed";
  EXPECT_EQ(field_of([&] { to_json(p); }), "reason") << "writers refuse what readers refuse";
}

TEST(AppPoint, FailedVerification) {
  AppPoint p = sample_point();
  EXPECT_FALSE(failed_verification(p));
  p.verification.passed = false;
  EXPECT_TRUE(failed_verification(p));
  p.verification.checked = false;
  EXPECT_FALSE(failed_verification(p)) << "unchecked is not failed";
  p.status = "failed";
  p.reason = "CUDA error";
  EXPECT_TRUE(failed_verification(p));
  p.status = "skipped";
  EXPECT_FALSE(failed_verification(p));
}

}  // namespace
}  // namespace xs::report
