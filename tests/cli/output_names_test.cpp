// tests/cli: output names the file system or JSON cannot take, and two commands writing one output (issue 31 item 6,
// the leftovers of 2026-12-07): a file name near NAME_MAX (its temporary or journal would pass it), an argument that
// is not UTF-8 (the JSON writer refused meta.argv after measuring, naming no flag), and a --csv another command
// wrote meanwhile (it was replaced silently). Each is exit 2 before anything runs, or with nothing half-written.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tool_run.hpp"

namespace xs::test {
namespace {

const std::string kBench = "remote_store.periodic --backend sim --K 1,2 --B 16KiB --G 0 --no-progress";

std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) found.push_back(e.path().string());
  return found;
}

// A --csv whose name is 250 bytes: within the 255 of a name, though "<name>.tmp.XXXXXX" is not. The temporary is
// cut short and the file is written (it was exit 2 after the sweep: "File name too long").
TEST(OutputNames, ANameNearTheLimitIsWritten) {
  Scratch s;
  const std::string csv(246, 'c');
  const ToolRun r = s.run("xstage-bench", kBench + " --out r.json --csv " + csv + ".csv");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(s.path(csv + ".csv")));
  EXPECT_TRUE(temporaries(s.dir()).empty());
}

// A name over the limit, and an --out whose journal name would be: refused before anything runs, saying how long
// a name may be (the journal's: "<out>.journal.jsonl"), by the dry run too.
TEST(OutputNames, ANameOverTheLimitIsRefusedBeforeMeasuring) {
  Scratch s;
  const std::string long_csv(256, 'c'), long_out(250, 'o');
  for (const std::string dry : {"", " --dry-run"}) {
    expect_refused(s, "xstage-bench", kBench + " --out r.json --csv " + long_csv + dry, 2,
                   {"--csv has a file name of 256 bytes, over the 255 bytes per name this file system takes"});
    expect_refused(s, "xstage-bench", kBench + " --out " + long_out + dry, 2,
                   {"the journal has a file name of 264 bytes", "give --out a file name of at most 241 bytes"});
    expect_refused(s, "xstage-calibrate", "--backend sim --no-progress --out " + long_out + dry, 2,
                   {"the journal has a file name of 264 bytes", "give --out a file name of at most 241 bytes"});
  }
}

// An argument that is not UTF-8 is refused before anything runs, naming its flag, the bytes shown as \xHH.
TEST(OutputNames, AnArgumentThatIsNotUtf8IsRefusedNamingTheFlag) {
  Scratch s;
  const std::string bad = std::string("r\xff\xfe") + ".json";
  const auto refused = [&](const std::string& tool, std::vector<std::string> args, const std::string& needle) {
    SCOPED_TRACE(tool + " " + needle);
    const auto before = snapshot(s.dir());
    RunOptions o;
    o.cwd = s.dir();
    expect_refusal(run_tool(tool, args, o), tool, 2, {needle, "is not valid UTF-8", "meta.argv"});
    EXPECT_EQ(snapshot(s.dir()), before);
  };
  std::vector<std::string> bench = words(kBench);
  bench.insert(bench.end(), {"--out", bad});
  refused("xstage-bench", bench, "--out: 'r\\xFF\\xFE.json'");
  refused("xstage-calibrate", {"--backend", "sim", "--no-progress", "--csv=" + bad}, "--csv: 'r\\xFF\\xFE.json'");
  refused("xstage-predict", {"fa-result", bad}, "argument 2: 'r\\xFF\\xFE.json'");
  // Valid UTF-8 beyond ASCII is a name like any other.
  const ToolRun ok = s.run("xstage-bench", kBench + " --out r\xc3\xa9sultat.json");
  EXPECT_EQ(ok.rc, 0) << ok.err;
}

// Two commands given one --csv (journals are locked, a --csv is not): the one that finishes last finds the file
// written since it checked it, refuses to replace it, and writes none of its outputs; its measured points stay in
// its journal. The first command is stopped (SIGSTOP) while it measures, so the order does not depend on timing.
TEST(OutputNames, ACsvAnotherCommandWroteMeanwhileIsNotReplaced) {
  Scratch s, capture;
  RunOptions in_scratch;
  in_scratch.cwd = s.dir();
  const std::string journal = s.path("a.json.journal.jsonl");
  const pid_t first = start_tool("xstage-bench",
                                 {"remote_store.periodic", "--backend", "sim", "--K", "1,2,4,8", "--B", "16KiB:256KiB:x2",
                                  "--G", "0:2us:+0.5us", "--reps", "400", "--no-progress", "--out", "a.json", "--csv",
                                  "shared.csv"},
                                 capture.dir(), in_scratch);
  for (int i = 0; i < 6000 && count_lines(journal) < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(::kill(first, SIGSTOP), 0);
  ASSERT_GE(count_lines(journal), 2u) << read_file(capture.path("stderr.txt"));
  const ToolRun second = s.run("xstage-bench", kBench + " --out b.json --csv shared.csv");
  ::kill(first, SIGCONT);
  ASSERT_EQ(second.rc, 0) << second.err;
  const std::string written = read_file(s.path("shared.csv"));
  const int rc = wait_tool(first, 300);
  const std::string err = read_file(capture.path("stderr.txt"));
  EXPECT_EQ(rc, 2) << err;
  EXPECT_TRUE(contains(err, "xstage-bench: error: --csv: shared.csv: another command wrote this output while this "
                            "one ran (it was created after this command checked it), so it is not replaced; none of "
                            "the outputs was written")) << err;
  EXPECT_TRUE(contains(err, "measured points are kept in a.json.journal.jsonl")) << err;
  EXPECT_FALSE(std::filesystem::exists(s.path("a.json")));
  EXPECT_EQ(read_file(s.path("shared.csv")), written) << "the second command's file was replaced";
  EXPECT_TRUE(temporaries(s.dir()).empty());
}

}  // namespace
}  // namespace xs::test
