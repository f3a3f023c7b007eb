// xstage cli tests: no output destroys another run's journal, and a journal that cannot be read names itself and
// how to remove it. Issue 31: `--refit X --out X.journal.jsonl` replaced the journal of the run that wrote X, and
// a corrupt journal stopped every fresh run with a parse error and no way out.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tool_run.hpp"

namespace xs::test {
namespace {

const std::string kBench = "remote_store.periodic --backend sim --K 1,2 --B 16KiB --G 0 --no-progress";

TEST(JournalGuard, NoOutputReplacesAJournal) {
  Scratch s;
  ASSERT_EQ(s.run("xstage-calibrate", "--backend sim --no-progress --out c.json").rc, 0);  // c.json and its journal
  ASSERT_EQ(s.run("xstage-bench", kBench + " --out r.json").rc, 0);                         // r.json and its journal
  ASSERT_TRUE(std::filesystem::exists(s.path("c.json.journal.jsonl")));
  std::filesystem::copy_file(s.path("r.json.journal.jsonl"), s.path("renamed.txt"));  // a journal by its content
  std::filesystem::create_symlink(s.path("r.json.journal.jsonl"), s.path("link.json"));
  for (const std::string out : {"c.json.journal.jsonl", "r.json.journal.jsonl", "renamed.txt", "link.json",
                                "new.journal.jsonl"})
    expect_refused(s, "xstage-calibrate", "--refit c.json --out " + out, 2, {out, "a run's journal", "another path"});
  expect_refused(s, "xstage-bench", kBench + " --out other.json --csv r.json.journal.jsonl", 2,
                 {"--csv is named like a run's journal"});
  expect_refused(s, "xstage-bench", kBench + " --out x.journal.jsonl", 2, {"--out is named like a run's journal"});
  // The refit still writes a plain new file, and the run's own journal is still started over.
  EXPECT_EQ(s.run("xstage-calibrate", "--refit c.json --out c2.json").rc, 0);
  const ToolRun again = s.run("xstage-bench", kBench + " --out r.json");
  EXPECT_EQ(again.rc, 0) << again.err;
  EXPECT_TRUE(contains(again.err, "xstage-bench: starting over: ")) << again.err;
}

TEST(JournalGuard, ACorruptJournalNamesItselfAndHowToRemoveIt) {
  Scratch s;
  ASSERT_EQ(s.run("xstage-bench", kBench + " --out r.json").rc, 0);
  const std::string journal = "r.json.journal.jsonl";
  std::string text = read_file(s.path(journal));
  const std::size_t second = text.find('\n') + 1;
  text.replace(second, text.find('\n', second) - second, "garbage");  // line 2: not a point record
  write_file(s.path(journal), text);
  for (const std::string flags : {"", " --resume", " --dry-run", " --resume --dry-run"})
    expect_refused(s, "xstage-bench", kBench + " --out r.json" + flags, 2,
                   {journal + ":2", "rm '" + journal + "'", "without --resume to start over"});
  // Removed as told, the next run starts.
  std::filesystem::remove(s.path(journal));
  EXPECT_EQ(s.run("xstage-bench", kBench + " --out r.json").rc, 0);
}

}  // namespace
}  // namespace xs::test
