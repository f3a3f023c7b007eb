// xstage report tests: write_json_atomic leaves either the old file or the complete new one, and never
// a temporary file, whatever fails.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <limits>

#include "xs/common/error.hpp"
#include "fixtures.hpp"
#include "xs/report/file_io.hpp"

namespace xs {
namespace {
using nlohmann::json;

TEST(AtomicWrite, WritesAndReplacesCompleteFiles) {
  test::ScratchDir dir;
  const std::string out = dir.file("result.json");
  report::write_json_atomic(out, report::to_json(test::sample_file()));
  EXPECT_EQ(report::read_result_file(out).points.size(), 3u);
  report::write_json_atomic(out, json{{"replaced", true}});
  EXPECT_EQ(report::read_json_file(out), json({{"replaced", true}}));
  EXPECT_EQ(dir.num_entries(), 1u) << "a temporary file was left behind";
}

TEST(AtomicWrite, GetsPlainCreatePermissions) {
  test::ScratchDir dir;
  const std::string out = dir.file("result.json");
  report::write_json_atomic(out, json::object());
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);  // not mkstemp's 0600
}

TEST(AtomicWrite, NaNIsRefusedAndNothingIsWritten) {
  test::ScratchDir dir;
  const std::string out = dir.file("result.json");
  json j = {{"model", {{"R_Bps", std::numeric_limits<double>::quiet_NaN()}}}};
  try {
    report::write_json_atomic(out, j);
    FAIL() << "NaN was written";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "model.R_Bps");
  }
  EXPECT_EQ(dir.num_entries(), 0u);
}

TEST(AtomicWrite, FailedWriteKeepsTheOldFile) {
  test::ScratchDir dir;
  const std::string out = dir.file("result.json");
  report::write_json_atomic(out, json{{"version", 1}});
  EXPECT_THROW(report::write_json_atomic(out, json{{"bad", std::numeric_limits<double>::infinity()}}), Error);
  EXPECT_EQ(report::read_json_file(out), json({{"version", 1}}));
  EXPECT_EQ(dir.num_entries(), 1u);
}

TEST(AtomicWrite, UnwritableDestinationLeavesNoTemporary) {
  test::ScratchDir dir;
  // A directory at the destination: the temp file is written, the rename fails, the temp must go.
  std::filesystem::create_directory(dir.file("taken"));
  EXPECT_THROW(report::write_json_atomic(dir.file("taken"), json::object()), Error);
  EXPECT_EQ(dir.num_entries(), 1u);
  // Parent is a file or does not exist: the temp cannot even be created.
  std::ofstream(dir.file("plain")) << "x";
  EXPECT_THROW(report::write_json_atomic(dir.file("plain") + "/out.json", json::object()), Error);
  EXPECT_THROW(report::write_json_atomic(dir.file("missing") + "/out.json", json::object()), Error);
  EXPECT_EQ(dir.num_entries(), 2u);
}

TEST(AtomicWrite, ReadOnlyDirectoryIsAnIoError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  test::ScratchDir dir;
  std::filesystem::create_directory(dir.file("ro"));
  ::chmod(dir.file("ro").c_str(), 0555);
  try {
    report::write_json_atomic(dir.file("ro") + "/out.json", json::object());
    FAIL() << "wrote into a read-only directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.domain(), "io");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
  ::chmod(dir.file("ro").c_str(), 0755);
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("ro")));
}

TEST(AtomicWrite, TextVariantWritesBytesVerbatim) {
  test::ScratchDir dir;
  report::write_text_atomic(dir.file("a.xml"), "<a/>\n");
  EXPECT_EQ(report::read_text_file(dir.file("a.xml")), "<a/>\n");
}

// A FIFO as an input: refused at once as "not a regular file" (opening it without O_NONBLOCK waited forever for a
// writer that never comes).
TEST(ReadTextFile, AFifoIsRefusedWithoutWaiting) {
  test::ScratchDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  try {
    (void)report::read_text_file(dir.file("fifo"));
    ADD_FAILURE() << "a FIFO was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

// A rename over a device node would replace /dev/null for the whole machine (as root): refused, untouched.
TEST(AtomicWrite, NeverReplacesWhatIsNotARegularFile) {
  struct stat before {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  try {
    report::write_json_atomic("/dev/null", json::object());
    FAIL() << "wrote over /dev/null";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("character device"), std::string::npos) << e.what();
  }
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_ino, before.st_ino);

  test::ScratchDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0644), 0);
  EXPECT_THROW(report::write_text_atomic(dir.file("fifo"), "x"), Error);
  std::filesystem::create_symlink("/dev/null", dir.file("link"));  // a symlink to a device counts as the device
  EXPECT_THROW(report::write_text_atomic(dir.file("link"), "x"), Error);
  EXPECT_TRUE(std::filesystem::is_fifo(dir.file("fifo")));
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link")));
  EXPECT_EQ(dir.num_entries(), 2u);  // no temporary left behind
}

TEST(OutputPath, AcceptsNewAndRegularFilesAndCreatableFolders) {
  test::ScratchDir dir;
  EXPECT_NO_THROW(report::check_output_path(dir.file("new.json"), "--out"));
  std::ofstream(dir.file("old.json")) << "{}";
  EXPECT_NO_THROW(report::check_output_path(dir.file("old.json"), "--out"));
  EXPECT_NO_THROW(report::check_output_path(dir.file("a/b/c.json"), "--out"));
  EXPECT_FALSE(std::filesystem::exists(dir.file("a")));  // checking creates nothing
  report::prepare_output_path(dir.file("a/b/c.json"), "--out");
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("a/b")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("a/b/c.json")));
}

TEST(OutputPath, RefusesDevicesFifosFoldersAndFilesAsFolders) {
  test::ScratchDir dir;
  auto expect_refused = [](const std::string& path, const std::string& words) {
    try {
      report::check_output_path(path, "--csv");
      ADD_FAILURE() << path << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_EQ(e.domain(), "io");
      const std::string message = e.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_NE(message.find("--csv"), std::string::npos) << message;
      EXPECT_NE(message.find(words), std::string::npos) << message;
    }
  };
  expect_refused("/dev/null", "is a character device, not a regular file");
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0644), 0);
  expect_refused(dir.file("fifo"), "is a fifo");
  expect_refused(dir.path().string(), "is a folder");
  std::ofstream(dir.file("plain")) << "x";
  expect_refused(dir.file("plain") + "/x/out.json", "is not a folder");
  // A folder by its spelling, existing or not: refused before any measurement (no folder created).
  expect_refused(dir.file("new") + "/", "names a folder (it ends in '/')");
  expect_refused(dir.file("new") + "/.", "names a folder (it ends in '.')");
  EXPECT_EQ(dir.num_entries(), 2u);
}

TEST(OutputPath, UnwritableFolderIsNamed) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores folder permissions (tests/cli covers it as nobody)";
  test::ScratchDir dir;
  std::filesystem::create_directory(dir.file("ro"));
  ::chmod(dir.file("ro").c_str(), 0555);
  try {
    report::check_output_path(dir.file("ro") + "/sub/out.json", "--out");
    ADD_FAILURE() << "accepted a path below a read-only folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("folder " + dir.file("ro") + " is not writable"), std::string::npos)
        << e.what();
  }
  ::chmod(dir.file("ro").c_str(), 0755);
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("ro")));
}

}  // namespace
}  // namespace xs
