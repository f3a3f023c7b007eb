// tests/cli: xstage-bench's suites come from the registry: --list names each with its line, an unknown
// suite is exit 2 listing the accepted ids, each suite's options sit in its --help group, and fa_a2a is
// listed and dry-runs in any build while running it without a (CUDA build and) GPU is exit 77, no file.
#include <gtest/gtest.h>

#include <string>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
const std::string kTool = "xstage-bench";

TEST(BenchSuites, ListNamesEveryRegisteredSuiteInOrder) {
  Scratch s;
  const ToolRun r = s.run(kTool, "--list");
  ASSERT_EQ(r.rc, 0) << r.err;
  // The remote_store suites, then the applications in XS_APPS order (the top CMakeLists.txt).
  const std::vector<std::string> ids = {"remote_store.periodic", "remote_store.isolated", "remote_store.local_control",
                                        "remote_store.loaded", "fa_a2a", "megamoe"};
  std::vector<std::size_t> line_starts;
  for (const auto& id : ids) {
    const std::size_t pos = r.out.rfind(id + " ", 0) == 0 ? 0 : r.out.find("\n" + id + " ");
    ASSERT_NE(pos, std::string::npos) << id << " missing in:\n" << r.out;
    if (!line_starts.empty()) {
      EXPECT_GT(pos, line_starts.back()) << id << " out of order in:\n" << r.out;
    }
    line_starts.push_back(pos);
  }
  EXPECT_TRUE(contains(r.out, "FlashAttention + Ulysses")) << r.out;
}

TEST(BenchSuites, UnknownSuiteListsTheAcceptedIds) {
  Scratch s;
  expect_refused(s, kTool, "remote_store.nope --dry-run", 2,
                 {"unknown suite 'remote_store.nope'", "remote_store.periodic", "fa_a2a", "see --list"});
}

TEST(BenchSuites, SuiteOptionsAppearUnderTheSuitesGroup) {
  Scratch s;
  const ToolRun r = s.run(kTool, "--help");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::size_t group = r.out.find("Options of the fa_a2a suite");
  ASSERT_NE(group, std::string::npos) << r.out;
  for (const char* flag : {"--M TEXT", "--heads", "--launches-per-graph", "--no-verify"})
    EXPECT_GT(r.out.find(flag), group) << flag;
  EXPECT_TRUE(contains(r.out, "xstage-bench fa_a2a --M")) << "the suite's example";
}

TEST(BenchSuites, FaA2aDryRunsWithoutAGpu) {
  Scratch s;
  const ToolRun r = s.run(kTool, "fa_a2a --M 8192,16384 --heads 4,8 --target host --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "fa_a2a M=16384 heads=4 P=8 target=host")) << r.out;
  EXPECT_TRUE(contains(r.out, "4 points")) << r.out;
  EXPECT_TRUE(snapshot(s.dir()).empty());
  expect_refused(s, kTool, "fa_a2a --M 8192 --dry-run --csv t.csv", 2, {"--csv", "not available for fa_a2a"});
  expect_refused(s, kTool, "fa_a2a --M 100x --dry-run", 2, {"--M"});
}

TEST(BenchSuites, FaA2aWithoutGpuIsSkipCodeAndWritesNothing) {
  Scratch s;
  const ToolRun r = s.run(kTool, "fa_a2a --M 8192 --target host --no-progress --out f.json");
  if (r.rc != 77) GTEST_SKIP() << "a GPU is here (rc " << r.rc << ")";
  EXPECT_TRUE(contains(r.err, "xstage-bench: error:")) << r.err;
  EXPECT_TRUE(contains(r.err, "CUDA build") || contains(r.err, "no usable GPU")) << r.err;
  EXPECT_TRUE(snapshot(s.dir()).empty()) << "no journal, no result, no out/ folder";
}

}  // namespace
