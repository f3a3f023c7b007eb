// xstage report tests: the journal keeps every finished point through a kill mid-write, refuses
// corruption anywhere but the last line, carries a header naming its run, and is locked by its run.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <limits>

#include "xs/common/error.hpp"
#include "fixtures.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/journal.hpp"

namespace xs {
namespace {

void append_raw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::app | std::ios::binary) << bytes;
}

report::JournalHeader sample_header() {
  report::JournalHeader h;
  h.backend = "sim";
  h.target = "host,local";
  h.seed = 7;
  h.sim = {{"R_Bps", 7.17e11}, {"Q_bytes", 4456448.0}};
  h.git_sha = "abc123";
  h.config_hash = report::sweep_hash({test::sample_record(1).spec, test::sample_record(2).spec});
  h.num_points = 2;
  return h;
}

std::string read_all(const std::string& path) { return report::read_text_file(path); }

TEST(Journal, HeaderThenRecordsReadBackInOrder) {
  test::ScratchDir dir;
  const std::string path = report::journal_path_for(dir.file("out.json"));
  EXPECT_EQ(path, dir.file("out.json.journal.jsonl"));
  {
    auto journal = report::Journal::create(path, sample_header());
    for (int k : {1, 2, 3}) journal->append(test::sample_record(k));
  }
  const auto contents = report::read_journal(path);
  EXPECT_FALSE(report::header_mismatch(contents.header, sample_header()).has_value());
  ASSERT_EQ(contents.records.size(), 3u);
  EXPECT_EQ(contents.records[2].spec.num_producers, 3);
  EXPECT_EQ(report::to_json(contents.records[0]), report::to_json(test::sample_record(1)));
  EXPECT_EQ(report::to_json(contents.header), report::to_json(sample_header()));
}

TEST(Journal, CreateRefusesAnExistingFileAndLeavesItAlone) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  std::ofstream(path) << "keep me\n";
  try {
    report::Journal::create(path, sample_header());
    ADD_FAILURE() << "created over an existing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another run on the same output?"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_all(path), "keep me\n");
}

TEST(Journal, TruncatedLastLineIsIgnored) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  {
    auto journal = report::Journal::create(path, sample_header());
    journal->append(test::sample_record(1));
    journal->append(test::sample_record(2));
  }
  const std::string line = report::to_json(test::sample_record(3)).dump();
  append_raw(path, line.substr(0, line.size() / 2));  // killed mid-write
  EXPECT_EQ(report::read_journal(path).records.size(), 2u);
  // Even a complete object without its '\n' is a write cut short, not a finished point.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - line.size() / 2);
  append_raw(path, line);
  EXPECT_EQ(report::read_journal(path).records.size(), 2u);
}

TEST(Journal, ResumeCutsThePartialLineBeforeAppending) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  { report::Journal::create(path, sample_header())->append(test::sample_record(1)); }
  append_raw(path, R"({"id": "remote_store.peri)");
  {
    auto journal = report::Journal::open_existing(path);
    EXPECT_EQ(journal->read().records.size(), 1u);
    journal->drop_partial_tail();
    journal->append(test::sample_record(2));
  }
  const auto records = report::read_journal(path).records;
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].spec.num_producers, 2);
}

TEST(Journal, RestartKeepsOnlyTheNewHeader) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  { report::Journal::create(path, sample_header())->append(test::sample_record(1)); }
  report::JournalHeader other = sample_header();
  other.seed = 8;
  {
    auto journal = report::Journal::open_existing(path);
    journal->restart(other);
    journal->append(test::sample_record(2));
  }
  const auto contents = report::read_journal(path);
  ASSERT_EQ(contents.records.size(), 1u);
  EXPECT_EQ(contents.records[0].spec.num_producers, 2);
  EXPECT_EQ(contents.header.seed, 8);
}

TEST(Journal, CorruptMiddleLineNamesLineAndField) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  { report::Journal::create(path, sample_header())->append(test::sample_record(1)); }
  nlohmann::json bad = report::to_json(test::sample_record(2));
  bad["spec"]["K"] = 0;
  append_raw(path, bad.dump() + "\n" + report::to_json(test::sample_record(3)).dump() + "\n");
  try {
    report::read_journal(path);
    FAIL() << "corrupt middle line accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), path + ":3 spec.K");  // line 1 is the header
  }
}

TEST(Journal, HeaderlessJournalOfAnOlderXstageIsRefusedClearly) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  std::ofstream(path) << report::to_json(test::sample_record(1)).dump() << "\n";
  try {
    report::read_journal(path);
    FAIL() << "header-less journal accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("no header line"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("remove it"), std::string::npos) << e.what();
  }
  std::ofstream(path, std::ios::trunc) << "";
  EXPECT_THROW(report::read_journal(path), Error);
  nlohmann::json header = report::to_json(sample_header());
  header["extra"] = 1;  // strict: unknown keys are refused
  std::ofstream(path, std::ios::trunc) << header.dump() << "\n";
  EXPECT_THROW(report::read_journal(path), Error);
  header = report::to_json(sample_header());
  header["schema"]["name"] = "xstage.result";
  std::ofstream(path, std::ios::trunc) << header.dump() << "\n";
  EXPECT_THROW(report::read_journal(path), Error);
}

TEST(Journal, MismatchNamesTheFirstDifferingFieldAndBothValues) {
  const report::JournalHeader a = sample_header();
  report::JournalHeader b = a;
  EXPECT_FALSE(report::header_mismatch(a, b).has_value());
  b.sim["R_Bps"] = 5e11;
  auto d = report::header_mismatch(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(d->find("sim.R_Bps"), std::string::npos) << *d;
  EXPECT_NE(d->find("717000000000"), std::string::npos) << *d;
  EXPECT_NE(d->find("500000000000"), std::string::npos) << *d;
  b = a;
  b.seed = 2;
  EXPECT_EQ(report::header_mismatch(a, b).value(), "seed (journal: 7, this run: 2)");
  b = a;
  b.target = "peer:1";
  EXPECT_EQ(report::header_mismatch(a, b).value(), "target (journal: host,local, this run: peer:1)");
  b = a;
  b.device = {{"index", 0}, {"name", "H200"}, {"uuid", "GPU-1"}};
  EXPECT_NE(report::header_mismatch(a, b).value().find("device"), std::string::npos);
  b = a;
  b.config_hash = report::sweep_hash({test::sample_record(1).spec});
  EXPECT_NE(report::header_mismatch(a, b).value().find("config_hash"), std::string::npos);
}

TEST(Journal, SweepHashTellsSweepsApart) {
  const PointSpec s1 = test::sample_record(1).spec, s2 = test::sample_record(2).spec;
  EXPECT_EQ(report::sweep_hash({s1, s2}), report::sweep_hash({s1, s2}));
  EXPECT_NE(report::sweep_hash({s1, s2}), report::sweep_hash({s2, s1}));
  PointSpec more_reps = s1;
  more_reps.repetitions += 1;
  EXPECT_NE(report::sweep_hash({s1}), report::sweep_hash({more_reps}));
}

TEST(Journal, LockKeepsASecondOpenerOut) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  auto first = report::Journal::create(path, sample_header());
  const std::string before = read_all(path);
  try {
    report::Journal::open_existing(path);
    FAIL() << "a locked journal was opened twice";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another run holds " + path), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_all(path), before);
  first.reset();  // released
  EXPECT_NO_THROW(report::Journal::open_existing(path));
}

TEST(Journal, InvalidRecordIsRefusedAndLeavesTheJournalClean) {
  test::ScratchDir dir;
  const std::string path = dir.file("j.jsonl");
  auto journal = report::Journal::create(path, sample_header());
  PointRecord bad = test::sample_record(1);
  bad.period_s.p90 = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(journal->append(bad), Error);
  journal->append(test::sample_record(2));
  EXPECT_EQ(report::read_journal(path).records.size(), 1u);
}

TEST(Journal, MissingOrUnopenableIsAnError) {
  EXPECT_THROW(report::read_journal("/nonexistent/j.jsonl"), Error);
  EXPECT_THROW(report::Journal::create("/nonexistent/dir/j.jsonl", sample_header()), Error);
  EXPECT_THROW(report::Journal::open_existing("/nonexistent/j.jsonl"), Error);
  EXPECT_TRUE(report::parse_journal("", "mem").empty());
}

TEST(Journal, DeviceNodeIsNeverOpenedAsAJournal) {
  EXPECT_THROW(report::Journal::open_existing("/dev/null"), Error);
  EXPECT_THROW(report::Journal::create("/dev/null", sample_header()), Error);
}

}  // namespace
}  // namespace xs
