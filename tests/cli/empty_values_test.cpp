// xstage cli tests: an empty value (--K "", --B "", --M "", ...) is refused with exit 2 naming the option and its
// accepted form, before anything runs; before issue 31 an empty list silently became the default sweep.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tool_run.hpp"

namespace xs::test {
namespace {

// Runs `tool` with `args` (which may hold empty strings) in `s`; expects exit 2, the needles on stderr and no
// change in the folder.
void expect_empty_refused(const Scratch& s, const std::string& tool, const std::vector<std::string>& args,
                          const std::vector<std::string>& needles) {
  std::string shown;
  for (const auto& a : args) shown += (a.empty() ? "\"\"" : a) + " ";
  SCOPED_TRACE(tool + " " + shown);
  const auto before = snapshot(s.dir());
  RunOptions options;
  options.cwd = s.dir();
  expect_refusal(run_tool(tool, args, options), tool, 2, needles);
  EXPECT_EQ(snapshot(s.dir()), before);
}

TEST(EmptyValues, AnEmptyListIsRefusedNotReadAsTheDefault) {
  Scratch s;
  const std::vector<std::string> bench = {"remote_store.periodic", "--backend", "sim", "--no-progress"};
  for (const std::string flag : {"--K", "--B", "--G"}) {
    for (const bool dry : {false, true}) {
      std::vector<std::string> args = bench;
      for (const std::string other : {"--K", "--B", "--G"})
        if (other != flag) args.insert(args.end(), {other, other == "--K" ? "1" : other == "--B" ? "16KiB" : "0"});
      args.insert(args.end(), {flag, ""});
      if (dry) args.push_back("--dry-run");
      expect_empty_refused(s, "xstage-bench", args, {flag + ": empty list", "accepted form: "});
    }
  }
  expect_empty_refused(s, "xstage-calibrate", {"--backend", "sim", "--K", "", "--dry-run"},
                       {"--K: empty list", "e.g. 1,8,33,132"});
  expect_empty_refused(s, "xstage-calibrate", {"--backend", "sim", "--B", "", "--out", "c.json"}, {"--B: empty list"});
  expect_empty_refused(s, "xstage-bench", {"fa_a2a", "--M", "", "--dry-run"}, {"--M: empty list", "range grammar"});
  expect_empty_refused(s, "xstage-bench", {"megamoe", "--T", "", "--dry-run"}, {"--T: empty list"});
  expect_empty_refused(s, "xstage-bench", {"megamoe", "--shapes", "", "--dry-run"}, {"--shapes: empty list"});
  expect_empty_refused(s, "xstage-bench", {"remote_store.periodic", "--backend", "sim", "--target", "", "--dry-run"},
                       {"--target: empty value"});
  // A value given is still read; flags are not values.
  RunOptions options;
  options.cwd = s.dir();
  const ToolRun ok = run_tool("xstage-bench", {"remote_store.periodic", "--backend", "sim", "--K", "1", "--B", "16KiB",
                                               "--G", "0", "--dry-run", "--no-progress"}, options);
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_TRUE(contains(ok.out, "1 points")) << ok.out;
}

}  // namespace
}  // namespace xs::test
