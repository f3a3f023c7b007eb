// xstage report tests: write_json_atomic leaves either the old file or the complete new one, and never
// a temporary file, whatever fails.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <limits>

#include "common/error.hpp"
#include "fixtures.hpp"
#include "report/file_io.hpp"

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

}  // namespace
}  // namespace xs
