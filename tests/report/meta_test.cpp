// xstage report tests: make_meta records build facts and merges the backend's description.
#include <gtest/gtest.h>

#include <regex>

#include "fixtures.hpp"
#include "xs/build_info.hpp"

namespace xs {
namespace {
using nlohmann::json;

TEST(Meta, CarriesBuildFactsArgvAndBackend) {
  const json backend = json::parse(R"({"devices": [{"name": "NVIDIA H200"}], "driver_version": "550.54.15",
                                       "backend": "spoofed"})");
  const json meta = report::make_meta({"xstage-bench", "--K", "1,8"}, "gpu", backend);
  EXPECT_EQ(meta["tool_version"], build_info::kVersion);
  EXPECT_EQ(meta["git_sha"], build_info::kGitSha);
  EXPECT_TRUE(meta["git_dirty"].is_boolean());
  EXPECT_EQ(meta["build_type"], build_info::kBuildType);
  EXPECT_EQ(meta["argv"], json({"xstage-bench", "--K", "1,8"}));
  EXPECT_EQ(meta["backend"], "gpu");  // the tool's own keys win a clash
  EXPECT_EQ(meta["driver_version"], "550.54.15");
  EXPECT_EQ(meta["devices"][0]["name"], "NVIDIA H200");
  EXPECT_TRUE(meta["host"].is_string());
  EXPECT_TRUE(std::regex_match(meta["date_utc"].get<std::string>(),
                               std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")));
}

TEST(Meta, DevicesAlwaysPresentAndOddDescriptionsKept) {
  EXPECT_EQ(report::make_meta({}, "sim", nullptr)["devices"], json::array());
  const json meta = report::make_meta({}, "sim", "planted R");
  EXPECT_EQ(meta["backend_description"], "planted R");
}

}  // namespace
}  // namespace xs
