// xstage cli tests: every output-path case (device node, fifo, folder, unwritable folder, a file where a
// folder should be) is refused with exit 2 and a message naming the path, before anything is measured,
// and leaves nothing created or changed.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <string>
#include <vector>

#include "run_tool.hpp"

namespace xs::test {
namespace {

std::vector<std::string> bench_args(const std::string& out) {
  return {"remote_store.periodic", "--backend", "sim", "--K", "1,2,4", "--B", "16KiB", "--G", "0",
          "--no-progress", "--out", out};
}

void expect_refused(const ToolRun& r, const std::vector<std::string>& words) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const auto& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << "missing '" << w << "' in: " << r.err;
  EXPECT_EQ(r.out, "") << "nothing should have been measured";
}

TEST(OutputPaths, DevNullAsOutIsRefusedAndStaysADevice) {
  struct stat before {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  for (const char* tool : {"xstage-bench", "xstage-calibrate"}) {
    std::vector<std::string> args = bench_args("/dev/null");
    if (std::string(tool) == "xstage-calibrate") args = {"--backend", "sim", "--no-progress", "--out", "/dev/null"};
    expect_refused(run_tool(tool, args), {"/dev/null", "character device, not a regular file"});
  }
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_FALSE(std::filesystem::exists("/dev/null.journal.jsonl"));
}

TEST(OutputPaths, DeviceNodeAsJournalIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can make a device node (and only root could clobber one)";
  TempDir dir;
  const std::string out = dir.file("r.json");
  if (::mknod((out + ".journal.jsonl").c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod not permitted here";
  const auto before = snapshot(dir.path());
  for (const bool resume : {false, true}) {
    auto args = bench_args(out);
    if (resume) args.push_back("--resume");
    expect_refused(run_tool("xstage-bench", args), {out + ".journal.jsonl", "character device"});
  }
  EXPECT_EQ(snapshot(dir.path()), before);
  EXPECT_TRUE(std::filesystem::is_character_file(out + ".journal.jsonl"));
}

TEST(OutputPaths, FifoAndFolderAreRefused) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0644), 0);
  std::filesystem::create_directory(dir.file("folder"));
  const auto before = snapshot(dir.path());
  expect_refused(run_tool("xstage-bench", bench_args(dir.file("fifo"))), {dir.file("fifo"), "is a fifo"});
  expect_refused(run_tool("xstage-bench", bench_args(dir.file("folder"))), {dir.file("folder"), "is a folder"});
  EXPECT_EQ(snapshot(dir.path()), before);
}

TEST(OutputPaths, FileWhereAFolderShouldBeIsRefused) {
  TempDir dir;
  std::ofstream(dir.file("plain")) << "x";
  const auto before = snapshot(dir.path());
  for (const char* tool : {"xstage-bench", "xstage-calibrate"}) {
    const std::string out = dir.file("plain") + "/sub/r.json";
    std::vector<std::string> args = bench_args(out);
    if (std::string(tool) == "xstage-calibrate") args = {"--backend", "sim", "--no-progress", "--out", out};
    expect_refused(run_tool(tool, args), {out, dir.file("plain") + " is not a folder"});
  }
  EXPECT_EQ(snapshot(dir.path()), before);
}

TEST(OutputPaths, UnwritableFolderIsRefused) {
  TempDir dir;
  ChildOptions as;
  if (::geteuid() == 0) as.run_as_uid = 65534;  // root writes anywhere: run the tool as nobody
  ::chmod(dir.path().c_str(), 0755);
  std::filesystem::create_directory(dir.file("ro"));
  ::chmod(dir.file("ro").c_str(), 0555);
  const auto before = snapshot(dir.path());
  const std::string out = dir.file("ro") + "/sub/r.json";
  const ToolRun r = run_tool("xstage-bench", bench_args(out), as);
  ASSERT_NE(r.exit_code, 125) << "could not drop privileges";
  if (r.exit_code == 127) GTEST_SKIP() << "the built tool cannot be executed by nobody from here";
  expect_refused(r, {out, "folder " + dir.file("ro") + " is not writable"});
  EXPECT_EQ(snapshot(dir.path()), before);
}

TEST(OutputPaths, NewFolderIsCreatedForAGoodPath) {
  TempDir dir;
  const std::string out = dir.file("a/b/r.json");
  const ToolRun r = run_tool("xstage-bench", bench_args(out));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(out));
}

}  // namespace
}  // namespace xs::test
