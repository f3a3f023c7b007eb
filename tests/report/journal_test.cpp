// xstage report tests: the journal keeps every finished point through a kill mid-write, and refuses
// corruption anywhere but the last line.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>

#include "common/error.hpp"
#include "fixtures.hpp"
#include "report/file_io.hpp"

namespace xs {
namespace {

void append_raw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::app | std::ios::binary) << bytes;
}

TEST(Journal, AppendsAndReadsBackInOrder) {
  test::ScratchDir dir;
  const std::string path = report::journal_path_for(dir.file("out.json"));
  EXPECT_EQ(path, dir.file("out.json.journal.jsonl"));
  {
    report::Journal journal(path, true);
    for (int k : {1, 2, 3}) journal.append(test::sample_record(k));
  }
  const auto records = report::read_journal(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].spec.num_producers, 3);
  EXPECT_EQ(report::to_json(records[0]), report::to_json(test::sample_record(1)));
}

TEST(Journal, TruncatedLastLineIsIgnored) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  {
    report::Journal journal(path, true);
    journal.append(test::sample_record(1));
    journal.append(test::sample_record(2));
  }
  const std::string line = report::to_json(test::sample_record(3)).dump();
  append_raw(path, line.substr(0, line.size() / 2));  // killed mid-write
  EXPECT_EQ(report::read_journal(path).size(), 2u);
  // Even a complete object without its '\n' is a write cut short, not a finished point.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - line.size() / 2);
  append_raw(path, line);
  EXPECT_EQ(report::read_journal(path).size(), 2u);
}

TEST(Journal, ResumeCutsThePartialLineBeforeAppending) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  { report::Journal(path, true).append(test::sample_record(1)); }
  append_raw(path, R"({"id": "remote_store.peri)");
  {
    report::Journal journal(path, false);
    journal.append(test::sample_record(2));
  }
  const auto records = report::read_journal(path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].spec.num_producers, 2);
  // A journal holding only a fragment resumes as empty.
  std::ofstream(path, std::ios::trunc) << "{\"id";
  { report::Journal(path, false).append(test::sample_record(5)); }
  ASSERT_EQ(report::read_journal(path).size(), 1u);
}

TEST(Journal, TruncateStartsOver) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  { report::Journal(path, true).append(test::sample_record(1)); }
  { report::Journal(path, true).append(test::sample_record(2)); }
  const auto records = report::read_journal(path);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].spec.num_producers, 2);
}

TEST(Journal, CorruptMiddleLineNamesLineAndField) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  { report::Journal(path, true).append(test::sample_record(1)); }
  nlohmann::json bad = report::to_json(test::sample_record(2));
  bad["spec"]["K"] = 0;
  append_raw(path, bad.dump() + "\n");
  { report::Journal(path, false).append(test::sample_record(3)); }
  try {
    report::read_journal(path);
    FAIL() << "corrupt middle line accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), path + ":2 spec.K");
  }
  std::ofstream(path, std::ios::trunc) << "not json\n" << report::to_json(test::sample_record(1)).dump() << "\n";
  EXPECT_THROW(report::read_journal(path), Error);
}

TEST(Journal, InvalidRecordIsRefusedAndLeavesTheJournalClean) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  report::Journal journal(path, true);
  PointRecord bad = test::sample_record(1);
  bad.period_s.p90 = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(journal.append(bad), Error);
  journal.append(test::sample_record(2));
  EXPECT_EQ(report::read_journal(path).size(), 1u);
}

TEST(Journal, MissingOrUnopenableIsAnError) {
  EXPECT_THROW(report::read_journal("/nonexistent/j.jsonl"), Error);
  EXPECT_THROW(report::Journal("/nonexistent/dir/j.jsonl", true), Error);
  EXPECT_TRUE(report::parse_journal("", "mem").empty());
}

}  // namespace
}  // namespace xs
