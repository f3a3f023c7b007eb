// xstage cli tests: every output-path case (device node, fifo, folder, unwritable folder, a file where a
// folder should be) is refused with exit 2 and a message naming the path, before anything is measured,
// and leaves nothing created or changed.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tool_run.hpp"

namespace xs::test {
namespace {

std::string bench_args(const std::string& out) {
  return "remote_store.periodic --backend sim --K 1,2,4 --B 16KiB --G 0 --no-progress --out " + out;
}

std::string args_for(const std::string& tool, const std::string& out) {
  return tool == "xstage-calibrate" ? "--backend sim --no-progress --out " + out : bench_args(out);
}

TEST(OutputPaths, DevNullAsOutIsRefusedAndStaysADevice) {
  struct stat before {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  Scratch s;
  for (const std::string tool : {"xstage-bench", "xstage-calibrate"})
    expect_refused(s, tool, args_for(tool, "/dev/null"), 2, {"/dev/null", "character device, not a regular file"});
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_FALSE(std::filesystem::exists("/dev/null.journal.jsonl"));
}

TEST(OutputPaths, DeviceNodeAsJournalIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can make a device node (and only root could clobber one)";
  Scratch dir;
  const std::string out = dir.path("r.json");
  if (::mknod((out + ".journal.jsonl").c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod not permitted here";
  const auto before = snapshot(dir.dir());
  for (const std::string resume : {"", " --resume"})
    expect_refused(dir, "xstage-bench", bench_args(out) + resume, 2, {out + ".journal.jsonl", "character device"});
  EXPECT_EQ(snapshot(dir.dir()), before);
  EXPECT_TRUE(std::filesystem::is_character_file(out + ".journal.jsonl"));
}

TEST(OutputPaths, FifoAndFolderAreRefused) {
  Scratch dir;
  ASSERT_EQ(::mkfifo(dir.path("fifo").c_str(), 0644), 0);
  std::filesystem::create_directory(dir.path("folder"));
  const auto before = snapshot(dir.dir());
  expect_refused(dir, "xstage-bench", bench_args(dir.path("fifo")), 2, {dir.path("fifo"), "is a fifo"});
  expect_refused(dir, "xstage-bench", bench_args(dir.path("folder")), 2, {dir.path("folder"), "is a folder"});
  EXPECT_EQ(snapshot(dir.dir()), before);
}

TEST(OutputPaths, FileWhereAFolderShouldBeIsRefused) {
  Scratch dir;
  write_file(dir.path("plain"), "x");
  const auto before = snapshot(dir.dir());
  for (const std::string tool : {"xstage-bench", "xstage-calibrate"}) {
    const std::string out = dir.path("plain") + "/sub/r.json";
    expect_refused(dir, tool, args_for(tool, out), 2, {out, dir.path("plain") + " is not a folder"});
  }
  EXPECT_EQ(snapshot(dir.dir()), before);
}

TEST(OutputPaths, UnwritableFolderIsRefused) {
  Scratch dir;
  RunOptions as;
  if (::geteuid() == 0) as.run_as_uid = 65534;  // root writes anywhere: run the tool as nobody
  ::chmod(dir.dir().c_str(), 0755);
  std::filesystem::create_directory(dir.path("ro"));
  ::chmod(dir.path("ro").c_str(), 0555);
  const auto before = snapshot(dir.dir());
  const std::string out = dir.path("ro") + "/sub/r.json";
  const ToolRun r = dir.run("xstage-bench", bench_args(out), as);
  ASSERT_NE(r.rc, 125) << "could not drop privileges";
  if (r.rc == 127) GTEST_SKIP() << "the built tool cannot be executed by nobody from here";
  expect_refusal(r, "xstage-bench", 2, {out, "folder " + dir.path("ro") + " is not writable"});
  EXPECT_EQ(snapshot(dir.dir()), before);
}

// Issue 31: /proc/self/fd/1 with stdout redirected into a file (as here: the harness captures stdout in a file)
// used to be taken for that file and replaced by the atomic rename, so the table written on stdout before
// was lost. Every path that names fd 1 or 2, and the very file stdout writes to, is that stream: --csv is
// written there directly (the table goes to stderr), and --out, which needs a file of its own, refuses it.
TEST(OutputPaths, ProcSelfFdOneIsTheStreamNotAFileToReplace) {
  Scratch dir;
  for (const std::string path : {"/proc/self/fd/1", "/dev/fd/1", "/proc/thread-self/fd/1"}) {
    SCOPED_TRACE(path);
    const ToolRun r = dir.run("xstage-bench", bench_args(dir.path("r.json")) + " --csv " + path);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out.rfind("id,suite,K,B_bytes", 0), 0u) << r.out;  // stdout holds the CSV and only it
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;  // header + 3 points
    EXPECT_TRUE(contains(r.err, "wrote " + dir.path("r.json"))) << r.err;  // the table went to stderr, kept
    EXPECT_TRUE(contains(r.err, "remote_store.periodic.host")) << r.err;
    std::filesystem::remove(dir.path("r.json"));
    std::filesystem::remove(dir.path("r.json.journal.jsonl"));
  }
  expect_refused(dir, "xstage-bench", bench_args("/proc/self/fd/1"), 2, {"/proc/self/fd/1", "is the standard output"});
  expect_refused(dir, "xstage-bench", bench_args(dir.path("r.json")) + " --csv /dev/fd/3", 2,
                 {"/dev/fd/3", "names file descriptor 3"});
  expect_refused(dir, "xstage-bench", bench_args(dir.path("r.json")) + " --csv /proc/self/fd/0", 2,
                 {"/proc/self/fd/0", "names file descriptor 0"});
}

TEST(OutputPaths, GateJunitOnProcSelfFdOneIsStreamed) {
  Scratch dir;
  ASSERT_EQ(dir.run("xstage-bench", bench_args(dir.path("r.json"))).rc, 0);
  const ToolRun r = dir.run("xstage-gate", "--baseline " + dir.path("r.json") + " --candidate " + dir.path("r.json") +
                                              " --config " + std::string(XS_TEST_DATA_DIR) +
                                              "/../../configs/gate/remote-store-points.json --junit /proc/self/fd/1");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.rfind("<?xml", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, "</testsuites>")) << r.out;
  EXPECT_TRUE(contains(r.err, "PASS")) << r.err;  // the summary went to stderr
}

// Issue 31: the atomic rename needs only the folder's write bit, so a read-only result was replaced. It is
// refused now (exit 2, naming the file), directly, through a symlink and as --csv, and stays as it was.
TEST(OutputPaths, ReadOnlyOutputIsRefusedAndKept) {
  Scratch dir;
  write_file(dir.path("kept.json"), "precious");
  ASSERT_EQ(::chmod(dir.path("kept.json").c_str(), 0444), 0);
  std::filesystem::create_symlink(dir.path("kept.json"), dir.path("link.json"));
  write_file(dir.path("kept.csv"), "precious");
  ASSERT_EQ(::chmod(dir.path("kept.csv").c_str(), 0444), 0);
  for (const std::string tool : {"xstage-bench", "xstage-calibrate"})
    expect_refused(dir, tool, args_for(tool, dir.path("kept.json")), 2, {dir.path("kept.json"), "is a read-only file"});
  expect_refused(dir, "xstage-bench", bench_args(dir.path("link.json")), 2,
                 {dir.path("link.json"), "read-only", "chmod u+w " + dir.path("kept.json")});
  expect_refused(dir, "xstage-bench", bench_args(dir.path("r.json")) + " --csv " + dir.path("kept.csv"), 2,
                 {dir.path("kept.csv"), "--csv is a read-only file"});
  EXPECT_EQ(read_file(dir.path("kept.json")), "precious");
  EXPECT_EQ(read_file(dir.path("kept.csv")), "precious");
  // Made writable again, the same command replaces it.
  ASSERT_EQ(::chmod(dir.path("kept.json").c_str(), 0644), 0);
  EXPECT_EQ(dir.run("xstage-bench", bench_args(dir.path("kept.json"))).rc, 0);
  EXPECT_NE(read_file(dir.path("kept.json")), "precious");
}

// Issue 31: outputs once described as "a new file" (moe-score --out and its default --md, --refit --out) replace
// a writable file already there, as docs/exit-codes.md says; the messages and --help say so too.
TEST(OutputPaths, AnExistingWritableOutputIsReplacedAsDocumented) {
  const std::string root = std::string(XS_TEST_DATA_DIR) + "/../..";
  const std::string moe = root + "/results/h200/megamoe/matrix/megamoe-bf16-6976.json";
  const std::string moe_cal = root + "/results/h200/megamoe/calibration-moe-pattern.json";
  Scratch dir;
  expect_refused(dir, "xstage-predict", "moe-score --results " + moe + " --model " + moe_cal, 2,
                 {"--out", "an existing file is replaced, never an input"});
  write_file(dir.path("score.json"), "old");
  write_file(dir.path("score.md"), "old");
  const ToolRun score = dir.run("xstage-predict", "moe-score --results " + moe + " --model " + moe_cal +
                                                      " --out " + dir.path("score.json"));
  ASSERT_EQ(score.rc, 0) << score.err;
  EXPECT_NE(read_file(dir.path("score.json")).find("\"tool\""), std::string::npos);
  EXPECT_NE(read_file(dir.path("score.md")), "old");
  EXPECT_NE(read_file(dir.path("score.md")).find('|'), std::string::npos);

  ASSERT_EQ(dir.run("xstage-calibrate", args_for("xstage-calibrate", dir.path("c.json"))).rc, 0);
  expect_refused(dir, "xstage-calibrate", "--refit " + dir.path("c.json"), 2,
                 {"--out", "another file than the one it reads", "an existing file at FILE is replaced"});
  write_file(dir.path("refit.json"), "old");
  const ToolRun refit = dir.run("xstage-calibrate", "--refit " + dir.path("c.json") + " --out " + dir.path("refit.json"));
  ASSERT_EQ(refit.rc, 0) << refit.err;
  EXPECT_NE(read_file(dir.path("refit.json")).find("\"model\""), std::string::npos);
  const ToolRun help = dir.run("xstage-calibrate", "--help");
  EXPECT_TRUE(contains(help.out, "an existing file")) << help.out;
}

TEST(OutputPaths, NewFolderIsCreatedForAGoodPath) {
  Scratch dir;
  const std::string out = dir.path("a/b/r.json");
  const ToolRun r = dir.run("xstage-bench", bench_args(out));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(out));
}

}  // namespace
}  // namespace xs::test
