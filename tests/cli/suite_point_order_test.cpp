// tests/cli: the order and values of the application suites' points, pinned line by line through --dry-run. The
// expected lines come from nested loops written here in the order the suites documented before their axes were
// declared (issue 30): fa_a2a targets x heads x M, megamoe target x shape x precision x routing x T x K_SM x D, the
// last axis fastest. Which point is refused first when several are bad is pinned too.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
const std::string kTool = "xstage-bench";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

TEST(SuitePointOrder, FaA2aIsTargetsThenHeadsThenM) {
  Scratch s;
  const ToolRun r = s.run(kTool, "fa_a2a --M 16384,8192,24576 --heads 8,4 --target host,local --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<std::string> expected;
  for (const char* target : {"host", "local"})
    for (int heads : {8, 4})
      for (int m : {16384, 8192, 24576})
        expected.push_back(fmt::format("fa_a2a M={} heads={} P=8 target={} device=0 d=128 tiles=dynamic", m, heads,
                                       target));
  expected.push_back("12 points");
  EXPECT_EQ(lines_of(r.out), expected) << r.out;
}

TEST(SuitePointOrder, FaA2aRefusesTheFirstBadPointInThatOrder) {
  Scratch s;
  // (heads 2000, M 8192) comes before (heads 4, M 1000): the heads are named.
  expect_refused(s, kTool, "fa_a2a --M 8192,1000 --heads 2000,4 --dry-run", 2, {"--heads", "2000 heads"});
  // (heads 4, M 1000) comes first now: M is named.
  expect_refused(s, kTool, "fa_a2a --M 1000,8192 --heads 4,2000 --dry-run", 2, {"--M", "M = 1000"});
}

TEST(SuitePointOrder, MegaMoeIsTargetShapePrecisionRoutingTKsmD) {
  Scratch s;
  const ToolRun r = s.run(kTool, "megamoe --shapes qwen3_5,dsv4_flash --precision fp8,bf16 --routing skewed,balanced "
                                 "--T 6976,2048 --ksm 132,66 --D 2,0 --target local,host --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<std::string> expected;
  for (const char* target : {"local", "host"})
    for (const char* shape : {"qwen3_5", "dsv4_flash"})
      for (const char* precision : {"fp8", "bf16"})
        for (const char* routing : {"skewed", "balanced"})
          for (int tokens : {6976, 2048})
            for (int ksm : {132, 66})
              for (const char* lead : {"2", "auto"})
                expected.push_back(fmt::format("megamoe shape={} precision={} routing={} T={} P=8 K_SM={} b_n={} D={} "
                                               "target={} widths=1,2,4,8", shape, precision, routing, tokens, ksm,
                                               // --block-n auto: 256 where it runs (bf16 here), else 128
                                               std::string(precision) == "fp8" ? 128 : 256, lead, target));
  expected.push_back("128 points");
  EXPECT_EQ(lines_of(r.out), expected) << r.out;
}

TEST(SuitePointOrder, MegaMoeWithAllShapesKeepsTheModelsFileOrder) {
  Scratch s;
  const ToolRun r = s.run(kTool, "megamoe --shapes all --T 2048 --target local --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 9u) << r.out;
  EXPECT_EQ(lines.back(), "8 points");
  // "all" ends the list: a shape named after it is not added again.
  const ToolRun after = s.run(kTool, "megamoe --shapes all,qwen3_5 --T 2048 --target local --dry-run");
  ASSERT_EQ(after.rc, 0) << after.err;
  EXPECT_EQ(lines_of(after.out), lines);
}

}  // namespace
