// xstage cli tests: every output-path case (device node, fifo, folder, unwritable folder, a file where a
// folder should be) is refused with exit 2 and a message naming the path, before anything is measured,
// and leaves nothing created or changed.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

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

TEST(OutputPaths, NewFolderIsCreatedForAGoodPath) {
  Scratch dir;
  const std::string out = dir.path("a/b/r.json");
  const ToolRun r = dir.run("xstage-bench", bench_args(out));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(out));
}

}  // namespace
}  // namespace xs::test
