// Tests for a megamoe point's axes (moe/point/moe_point_json.hpp): a spec written and read back is the same spec,
// every committed megamoe point's axes read back and write the same values, and a required axis missing is an
// input_error naming it.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "xs/common/error.hpp"
#include "xs/moe/advisor/moe_advisor.hpp"
#include "xs/moe/point/moe_point_json.hpp"

namespace xs::moe {
namespace {
using nlohmann::json;

json read_committed(const std::string& relative) {
  std::ifstream f(std::string(XS_TEST_DATA_DIR) + "/../../" + relative);
  return json::parse(f);
}

TEST(MoePointJson, ASpecWrittenAndReadBackIsTheSameSpec) {
  MoePointSpec s;
  s.shape = {"dsv4_flash", "", "", 4096, 2048, 256, 8, false};
  s.precision = "fp8";
  s.routing = "balanced";
  s.zipf_alpha = 0;
  s.routing_seed = 7;
  s.num_ctas = 132;
  s.block_n = 256;
  s.lead_rows = 5;
  s.experts_per_wave = {1, 4};
  s.cooperative_launch = false;
  s.variants = {"interleaved", "serial"};
  const json axes = json(s);
  const MoePointSpec back = axes.get<MoePointSpec>();
  EXPECT_EQ(json(back), axes);
  EXPECT_EQ(back.lead_rows, 5);
  EXPECT_EQ(back.variants, s.variants);
  EXPECT_EQ(json(MoePointSpec{})["variants"], json(moe_variant_names())) << "no variants named: every family";
  const AdvisorConfig c = advisor_config_of(back);
  EXPECT_EQ(c.num_sms, 132);
  EXPECT_EQ(c.block_n, 256);
  EXPECT_EQ(c.shape.hidden, 4096);
  EXPECT_EQ(c.routing_seed, 7u);
}

TEST(MoePointJson, CommittedPointsReadBackAndWriteTheSameAxes) {
  // A file of today's writer (every key) and one from before verify_rotation, overlap_waves and cooperative_launch.
  for (const char* file : {"results/h200/megamoe/matrix/megamoe-bf16-2048.json",
                           "results/h200/megamoe/megamoe-dsv4_flash-bn128.json"}) {
    const json result = read_committed(file);
    int checked = 0;
    for (const json& point : result.at("points")) {
      if (point.at("suite") != "megamoe") continue;
      const json& axes = point.at("axes");
      const json again = json(axes.get<MoePointSpec>());
      for (const auto& [key, value] : axes.items()) {
        if (key == "experts_per_wave" && value.is_number()) continue;  // the older files' one width, read as a list
        EXPECT_EQ(again.at(key), value) << file << " axes." << key;
      }
      ++checked;
    }
    EXPECT_GT(checked, 0) << file;
  }
}

TEST(MoePointJson, ARequiredAxisMissingIsNamed) {
  json axes = json(MoePointSpec{});
  axes.erase("K_SM");
  try {
    (void)axes.get<MoePointSpec>();
    FAIL() << "axes without K_SM were read";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "axes.K_SM");
  }
  axes = json(MoePointSpec{});
  axes["D"] = "five";
  EXPECT_THROW((void)axes.get<MoePointSpec>(), Error);
}

}  // namespace
}  // namespace xs::moe
