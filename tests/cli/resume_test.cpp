// xstage cli tests: --resume continues only the run its journal names (every mismatch is refused with
// exit 2, the field and both values), an existing journal without --resume is refused, a second run on
// the same output is locked out, and SIGTERM inside a long point stops it, keeping finished points.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace xs::test {
namespace {

std::size_t count_lines(const std::string& path) {
  std::size_t n = 0;
  for (char c : read_file(path)) n += c == '\n';
  return n;
}

class Resume : public ::testing::Test {
 protected:
  Scratch dir_;
  std::string out_ = dir_.path("r.json"), journal_ = out_ + ".journal.jsonl";

  // `extra` may start with "--K LIST" (then it replaces K = 1,2,4).
  static std::string args(const std::string& out, std::string extra = "") {
    std::string K = "1,2,4";
    if (extra.rfind("--K ", 0) == 0) {
      const auto end = extra.find(' ', 4);
      K = extra.substr(4, end - 4);
      extra = end == std::string::npos ? "" : extra.substr(end + 1);
    }
    return "remote_store.periodic --backend sim --K " + K + " --B 16KiB --G 0 --no-progress --out " + out + " " +
           extra;
  }
  // A finished run, then its result removed and the last point cut from the journal: an unfinished run
  // of 3 points with 2 in the journal (as after a kill).
  void SetUp() override {
    const ToolRun r = dir_.run("xstage-bench", args(out_));
    ASSERT_EQ(r.rc, 0) << r.err;
    std::filesystem::remove(out_);
    std::string text = read_file(journal_);
    ASSERT_EQ(count_lines(journal_), 4u);  // header + 3 points
    text.erase(text.rfind('\n', text.size() - 2) + 1);
    write_file(journal_, text);
  }
  void expect_refused(const std::string& extra, const std::vector<std::string>& words) {
    xs::test::expect_refused(dir_, "xstage-bench", args(out_, extra), 2, words);
  }
};

TEST_F(Resume, SameRunResumesAndSaysHowMuch) {
  const ToolRun r = dir_.run("xstage-bench", args(out_, "--resume"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("xstage-bench: resuming 2/3 points"), std::string::npos) << r.err;
  const auto result = nlohmann::json::parse(read_file(out_));
  EXPECT_EQ(result["points"].size(), 3u);
}

TEST_F(Resume, ExistingJournalWithoutResumeIsRefused) {
  expect_refused("", {journal_, "unfinished run (2 of 3 points)", "use --resume or remove it"});
}

TEST_F(Resume, OtherSeedIsRefused) { expect_refused("--resume --seed 2", {"seed (journal: 1, this run: 2)"}); }

TEST_F(Resume, OtherSimulatorParameterIsRefused) {
  expect_refused("--resume --sim-R 500GB/s", {"sim.R_Bps (journal: ", "this run: 500000000000"});
}

TEST_F(Resume, OtherTargetIsRefused) {
  expect_refused("--resume --target local", {"target (journal: host, this run: local)"});
}

TEST_F(Resume, OtherSweepIsRefused) {
  expect_refused("--K 1,2,8 --resume", {"config_hash (journal: fnv1a64:"});
  expect_refused("--resume --reps 4", {"config_hash"});
  expect_refused("--K 1,2 --resume", {"num_points (journal: 3, this run: 2)"});
}

// A journal written by another build (every rebuild stamps its commit and dirty flag): --resume refuses it and
// names --resume-any-build; that flag keeps its points and the result names the build that measured them.
// Any other difference is still refused with the flag.
TEST_F(Resume, OtherBuildNeedsResumeAnyBuild) {
  std::string text = read_file(journal_);
  const std::string key = "\"git_sha\":\"";
  const auto at = text.find(key);
  ASSERT_NE(at, std::string::npos) << text.substr(0, 400);
  const auto end = text.find('"', at + key.size());
  text.replace(at + key.size(), end - at - key.size(), "0123456789abcdef0123456789abcdef01234567");
  write_file(journal_, text);
  expect_refused("--resume", {"git_sha (journal: 0123456789abcdef", "only the build differs", "--resume-any-build"});
  expect_refused("--resume-any-build --seed 2", {"seed (journal: 1, this run: 2)"});
  const ToolRun r = dir_.run("xstage-bench", args(out_, "--resume-any-build"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("xstage-bench: resuming 2/3 points"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("xstage-bench: --resume-any-build: " + journal_ + " was written by build 0123456789abcdef"),
            std::string::npos)
      << r.err;
  const auto result = nlohmann::json::parse(read_file(out_));
  EXPECT_EQ(result["points"].size(), 3u);
  EXPECT_EQ(result["meta"]["resumed_from_build"], "0123456789abcdef0123456789abcdef01234567");
}

// A header git_sha that names no build (empty, control characters) cannot be recorded as resumed_from_build.
TEST_F(Resume, AnotherBuildMustBeABuildId) {
  std::string text = read_file(journal_);
  const std::string key = "\"git_sha\":\"";
  const auto at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  const auto end = text.find('"', at + key.size());
  text.replace(at + key.size(), end - at - key.size(), "");
  write_file(journal_, text);
  expect_refused("--resume-any-build", {"not a build id", "7 to 40 lowercase hex digits"});
}

TEST_F(Resume, SameBuildRecordsNoOtherBuild) {
  const ToolRun r = dir_.run("xstage-bench", args(out_, "--resume-any-build"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err.find("written by build"), std::string::npos) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(read_file(out_))["meta"].contains("resumed_from_build"));
}

TEST_F(Resume, HeaderlessJournalIsRefusedClearly) {
  std::string text = read_file(journal_);
  write_file(journal_, text.substr(text.find('\n') + 1));
  expect_refused("--resume", {journal_, "no header line", "remove it"});
  expect_refused("", {journal_, "no header line"});
}

TEST_F(Resume, LockHeldByAnotherProcessIsRefused) {
  const int fd = ::open(journal_.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  expect_refused("--resume", {"another run holds " + journal_});
  expect_refused("", {"another run holds " + journal_});
  ::close(fd);
}

// A sweep of a short point and a point that would run for many minutes; SIGTERM once the short one is
// journaled: the long one is abandoned between repetitions, the short one kept, no result file written.
TEST(Interrupt, SigtermInsideALongPointStopsAndKeepsFinishedPoints) {
  Scratch dir;
  const std::string config = dir.path("sweep.json"), out = dir.path("r.json"), journal = out + ".journal.jsonl";
  write_file(config, R"({"target": "host", "defaults": {"repetitions": 3},
    "blocks": [{"name": "short", "suite": "periodic", "K": "1", "B": "16KiB", "G": "0"},
               {"name": "long", "suite": "periodic", "K": "132", "B": "16KiB", "G": "0",
                "repetitions": 100000, "num_bursts": 1000}]})");
  Scratch capture;
  const pid_t pid = start_tool("xstage-calibrate",
                               {"--backend", "sim", "--sim-noise", "0.05", "--config", config, "--no-progress",
                                "--no-fit", "--out", out},
                               capture.dir());
  for (int i = 0; i < 6000 && count_lines(journal) < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(count_lines(journal), 2u) << read_file(capture.path("stderr.txt"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // inside the long point
  ::kill(pid, SIGTERM);
  const int code = wait_tool(pid, 60);
  const std::string err = read_file(capture.path("stderr.txt"));
  ASSERT_NE(code, -1) << "SIGTERM did not stop the long point: " << err;
  EXPECT_EQ(code, 143) << err;  // 128 + SIGTERM, as a shell reports it (docs/exit-codes.md)
  EXPECT_NE(err.find("finishing point 2/2"), std::string::npos) << err;
  EXPECT_NE(err.find("Ctrl-C again to abort"), std::string::npos) << err;
  EXPECT_NE(err.find("point 2/2"), std::string::npos) << err;
  EXPECT_EQ(count_lines(journal), 2u);  // header + the short point
  EXPECT_FALSE(std::filesystem::exists(out));
  for (const auto& e : std::filesystem::directory_iterator(dir.dir()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

}  // namespace
}  // namespace xs::test
