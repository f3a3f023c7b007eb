// tests/cli: xstage-calibrate's flags on the built-in sweep (issue 10): every per-point flag reaches every
// point (as --dry-run shows, without a GPU), --K narrows the sweep, an unfittable sweep is refused before
// measuring, --list/--only, the caps, --version, output folders; refusals create no file.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
const std::string kTool = "xstage-calibrate";

// The --dry-run table: per row the block, K and the last eight per-point values.
struct DryRow {
  std::string block;
  int K = 0;
  int bursts = 0, warmup = 0, reps = 0, width = 0, threads = 0;
  std::string producer, address, completion;
};

std::vector<DryRow> dry_rows(const std::string& out) {
  std::vector<DryRow> rows;
  std::istringstream lines(out);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    std::vector<std::string> t;
    std::istringstream words(line);
    for (std::string w; words >> w;) t.push_back(w);
    if (t.size() < 12 || t[1].rfind("remote_store.", 0) != 0) continue;  // the size line
    const std::size_t n = t.size();
    DryRow r;
    r.block = t[0];
    r.K = std::stoi(t[2]);
    r.bursts = std::stoi(t[n - 8]);
    r.warmup = std::stoi(t[n - 7]);
    r.reps = std::stoi(t[n - 6]);
    r.width = std::stoi(t[n - 5]);
    r.threads = std::stoi(t[n - 4]);
    r.producer = t[n - 3];
    r.address = t[n - 2];
    r.completion = t[n - 1];
    rows.push_back(r);
  }
  return rows;
}

std::vector<DryRow> dry_run(const Scratch& s, const std::string& flags) {
  const auto before = snapshot(s.dir());
  const ToolRun r = s.run(kTool, "--backend sim --dry-run " + flags);
  EXPECT_EQ(r.rc, 0) << flags << "\n" << r.err;
  EXPECT_EQ(snapshot(s.dir()), before) << "--dry-run wrote a file";
  const auto rows = dry_rows(r.out);
  EXPECT_GT(rows.size(), 100u) << flags << ": the default sweep has >100 points\n" << r.out;
  return rows;
}

TEST(CalibrateFlags, EveryPerPointFlagReachesEveryPointOfTheDefaultSweep) {
  Scratch s;
  // The loaded blocks of injection epilogue: their 256 math threads store, and their burst counts are their
  // tiles (256 or 64 per CTA, warm-up 1/16 of them), whatever --threads, --bursts and --warmup say.
  auto epilogue = [](const DryRow& r) { return r.block.rfind("loaded_epilogue", 0) == 0; };
  for (const auto& r : dry_run(s, "--reps 3")) EXPECT_EQ(r.reps, 3) << r.block;
  for (const auto& r : dry_run(s, "--bursts 30 --min-stream 0")) {
    if (epilogue(r)) EXPECT_TRUE(r.bursts == 256 || r.bursts == 64) << r.block << " " << r.bursts;
    else EXPECT_EQ(r.bursts, r.block == "isolated" ? 1 : 30) << r.block;
  }
  for (const auto& r : dry_run(s, "--warmup 3 --min-stream 0")) {
    if (epilogue(r)) EXPECT_TRUE(r.warmup == 16 || r.warmup == 4) << r.block << " " << r.warmup;
    else EXPECT_EQ(r.warmup, r.block == "isolated" ? 0 : 3) << r.block;
  }
  // The loaded blocks (storer warps of the mainloop CTAs, 16-B stores, one fence at the end) keep their store
  // width, producer kind and completion mode; xstage-calibrate says so in a note.
  auto loaded = [](const DryRow& r) { return r.block.rfind("loaded_", 0) == 0; };
  for (const auto& r : dry_run(s, "--store-width 8")) EXPECT_EQ(r.width, loaded(r) ? 16 : 8) << r.block;
  for (const auto& r : dry_run(s, "--threads 128")) EXPECT_EQ(r.threads, epilogue(r) ? 256 : 128) << r.block;
  for (const auto& r : dry_run(s, "--producer warp --threads 32")) {
    EXPECT_EQ(r.producer, loaded(r) ? "cta" : "warp") << r.block;
    EXPECT_EQ(r.threads, epilogue(r) ? 256 : 32) << r.block;
  }
  for (const auto& r : dry_run(s, "--address-mode same")) EXPECT_EQ(r.address, "same");
  for (const auto& r : dry_run(s, "--completion")) EXPECT_EQ(r.completion, loaded(r) ? "no" : "yes") << r.block;
  const ToolRun note = s.run(kTool, "--backend sim --dry-run --store-width 8 --completion");
  EXPECT_NE(note.err.find("loaded"), std::string::npos) << note.err;
  const ToolRun threads = s.run(kTool, "--backend sim --dry-run --threads 128");
  EXPECT_NE(threads.err.find("injection epilogue: --threads do(es) not apply"), std::string::npos) << threads.err;
}

// One epilogue block end to end on the simulator: the closed-loop records, their slowdown definition.
TEST(CalibrateFlags, OneEpilogueBlockRunsEndToEndOnTheSimulator) {
  Scratch s;
  const ToolRun r = s.run(kTool, "--backend sim --no-progress --only loaded_epilogue_k132 --reps 2 --out e.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(s.path("e.json")));
  ASSERT_EQ(j["points"].size(), 2u);  // B 2 and 8 KiB
  for (const auto& p : j["points"]) {
    EXPECT_EQ(p["spec"]["loaded"]["injection"], "epilogue");
    EXPECT_EQ(p["spec"]["G_s"], 0.0);
    const auto& e = p["loaded"]["epilogue"];
    ASSERT_TRUE(e.is_object()) << p.dump();
    for (std::size_t rep = 0; rep < 2; ++rep)
      EXPECT_NEAR(p["loaded"]["slowdown"]["samples"][rep].get<double>(),
                  e["mean_tile_epilogue_time_s"]["samples"][rep].get<double>() /
                      e["baseline_mean_tile_time_s"]["samples"][rep].get<double>(), 1e-9);
  }
}

TEST(CalibrateFlags, OnlyLoadedMeasuresTheLoadedBlocksWithoutTheBurstGapFit) {
  Scratch s;
  const ToolRun r = s.run(kTool, "--backend sim --no-progress --only loaded --reps 2 --out c.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("loaded mainloop under remote stores"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(read_file(s.path("c.json")));
  EXPECT_TRUE(j["model"].is_null());
  ASSERT_GT(j["points"].size(), 20u);
  std::set<double> slowdowns;
  for (const auto& p : j["points"]) {
    EXPECT_EQ(p["spec"]["suite"], "loaded");
    ASSERT_TRUE(p.contains("loaded")) << p.dump();
    slowdowns.insert(p["loaded"]["slowdown"]["median"].get<double>());
  }
  EXPECT_GT(*slowdowns.rbegin(), 1.2);  // the planted term shows (alpha 0.5 at a full path)
  // A planted absence: --sim-alpha 0 leaves every tile at its baseline (noise only).
  const ToolRun none = s.run(kTool, "--backend sim --no-progress --only loaded_k132 --sim-alpha 0 --out n.json");
  ASSERT_EQ(none.rc, 0) << none.err;
  for (const auto& p : nlohmann::json::parse(read_file(s.path("n.json")))["points"])
    EXPECT_NEAR(p["loaded"]["slowdown"]["median"].get<double>(), 1.0, 0.06);
}

TEST(CalibrateFlags, PerPointFlagsAlsoWorkWithoutDryRunOnTheSimulator) {
  Scratch s;
  const ToolRun r = s.run(kTool, "--backend sim --no-progress --reps 3 --out c.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(s.path("c.json")));
  ASSERT_GT(j["points"].size(), 100u);
  for (const auto& p : j["points"]) EXPECT_EQ(p["spec"]["repetitions"], 3);
}

// --G on an isolated suite ran at G = 0 without a word (hostile-CLI review of 2026-12-08): said, and the points keep
// G = 0.
TEST(CalibrateFlags, AGapGivenToAnIsolatedSuiteIsSaidNotToApply) {
  Scratch s;
  const ToolRun r = s.run("xstage-bench", "remote_store.isolated --backend sim --K 8 --B 16KiB --G 1us --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "isolated: one burst after recovery, no gap (--G 1us does not apply")) << r.err;
  const ToolRun p = s.run("xstage-bench", "remote_store.periodic --backend sim --K 8 --B 16KiB --G 1us --dry-run");
  ASSERT_EQ(p.rc, 0) << p.err;
  EXPECT_FALSE(contains(p.err, "does not apply")) << p.err;
}

TEST(CalibrateFlags, RaisedBurstCountsAreAnnouncedWithTheReason) {
  Scratch s;
  const ToolRun r = s.run(kTool, "--backend sim --dry-run --bursts 5 --warmup 1");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "note: block gap_sweep: num_bursts 5 -> 42, warmup_bursts 1 -> 10")) << r.err;
  EXPECT_TRUE(contains(r.err, "min_stream_bytes")) << r.err;
  EXPECT_TRUE(contains(r.err, "isolated: one burst per repetition")) << r.err;
  // The values the note announces are the values that run.
  for (const auto& row : dry_rows(r.out)) {
    if (row.block == "gap_sweep") {
      EXPECT_EQ(row.bursts, 42);
    }
  }
}

TEST(CalibrateFlags, KAloneNarrowsTheBuiltInSweep) {
  Scratch s;
  const ToolRun r = s.run(kTool, "--backend sim --dry-run --K 132");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto rows = dry_rows(r.out);
  std::set<std::string> blocks;
  for (const auto& row : rows) {
    EXPECT_EQ(row.K, 132);
    blocks.insert(row.block);
  }
  for (const char* kept : {"zero_gap", "gap_sweep", "isolated", "local_control"}) EXPECT_TRUE(blocks.count(kept)) << kept;
  for (const char* dropped : {"gap_sweep_k66", "gap_sweep_k33"}) EXPECT_FALSE(blocks.count(dropped)) << dropped;
  EXPECT_TRUE(contains(r.err, "gap_sweep_k66")) << "dropped blocks are named\n" << r.err;
}

TEST(CalibrateFlags, KAloneIsFittedAfterMeasuring) {
  Scratch s;
  const ToolRun r = s.run(kTool, "--backend sim --no-progress --K 132 --out c.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(s.path("c.json")));
  EXPECT_TRUE(j["model"].is_object());
  for (const auto& p : j["points"]) EXPECT_EQ(p["spec"]["K"], 132);
}

TEST(CalibrateFlags, SweepsThatSelectNothingOrCannotBeFittedAreRefusedBeforeMeasuring) {
  Scratch s;
  expect_refused(s, kTool, "--backend sim --no-progress --K 8 --out c.json", 2, {"--K", "selects no point"});
  expect_refused(s, kTool, "--backend sim --no-progress --only zero_gap --out c.json", 2,
                 {"cannot be fitted", "G > 0"});
  expect_refused(s, kTool, "--backend sim --no-progress --only isolated --out c.json", 2,
                 {"cannot be fitted", "zero-gap"});
  expect_refused(s, kTool, "--backend sim --no-progress --G 1us --out c.json", 2, {"--G", "--suite"});
}

TEST(CalibrateFlags, NoFitMeasuresAnUnfittableSweepAndWritesNoModel) {
  Scratch s;
  const ToolRun r = s.run(kTool, "--backend sim --no-progress --only zero_gap --no-fit --out c.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(s.path("c.json")));
  EXPECT_TRUE(j["model"].is_null());
  EXPECT_EQ(j["points"].size(), 20u);
}

TEST(CalibrateFlags, ListAndOnly) {
  Scratch s;
  ToolRun r = s.run(kTool, "--list");
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* needle : {"zero_gap", "gap_sweep_k33", "isolated", "local_control", "periodic", "points"})
    EXPECT_TRUE(contains(r.out, needle)) << r.out;
  EXPECT_TRUE(snapshot(s.dir()).empty());
  r = s.run(kTool, "--backend sim --dry-run --only zero_gap,isolated");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::set<std::string> blocks;
  for (const auto& row : dry_rows(r.out)) blocks.insert(row.block);
  EXPECT_EQ(blocks, (std::set<std::string>{"zero_gap", "isolated"}));
  r = s.run(kTool, "--backend sim --no-progress --only zero_gap,isolated --out c.json");
  EXPECT_EQ(r.rc, 0) << r.err;
  expect_refused(s, kTool, "--backend sim --only zero_gap,nosuch --out d.json", 2, {"--only", "nosuch", "zero_gap"});
}

TEST(CalibrateFlags, DryRunListAndDumpConfigNeverTouchTheGpu) {
  // This build may have no GPU backend at all (host-only): these must not create one.
  Scratch s;
  for (const char* flags : {"--dry-run", "--list", "--dump-config"}) {
    const ToolRun r = s.run(kTool, flags);
    EXPECT_EQ(r.rc, 0) << flags << "\n" << r.err;
  }
  EXPECT_TRUE(snapshot(s.dir()).empty());
}

TEST(CalibrateFlags, CapsAreExitTwoBeforeAnythingRuns) {
  Scratch s;
  expect_refused(s, kTool, "--backend sim --reps 2000000000 --out c.json", 2, {"--reps", "100000"});
  expect_refused(s, kTool, "--backend sim --bursts 2000000 --out c.json", 2, {"--bursts", "65536"});
  // A flag that makes one block's values invalid names that block.
  expect_refused(s, kTool, "--backend sim --bursts 5 --out c.json", 2, {"(block stream_", "warmup_bursts=6"});
  expect_refused(s, kTool, "--backend sim --suite periodic --K 1:1000:+1 --B 16:16000:+16 --out c.json", 2,
                 {"more than 100000 points"});
  expect_refused(s, kTool, "--backend sim --reps 0 --out c.json", 2, {"--reps"});
  expect_refused(s, kTool, "--backend sim --reps 1e10 --out c.json", 2, {"--reps"});
  const ToolRun help = s.run(kTool, "--help");
  EXPECT_TRUE(contains(help.out, "100,000")) << "the caps are stated in --help";
}

// A value a flag set is refused naming the flag the user typed, not the JSON field of the sweep config it fills
// (issue 31: "config.blocks[0] (block zero_gap).repetitions: 0 must be in [1, 100000]"); a value from --config keeps
// its JSON path there.
TEST(CalibrateFlags, OverrideRefusalsNameTheFlagTyped) {
  Scratch s;
  const std::string cal = "--backend sim --dry-run ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--reps 0", "--reps: 0 must be in [1, 100000]"},
      {"--bursts 70000", "--bursts: 70000 must be <= 65536"},
      {"--store-width 3", "--store-width: 3 is not a store width; use 4, 8 or 16"},
      {"--threads 0", "--threads: must be a multiple of 32 in [32, 1024]"},
      {"--suite periodic --K 0", "--K: K=0 must be in [1, 65536]"},
      {"--suite periodic --B 24", "--B: B=24 bytes must be > 0 and a multiple of 16"},
      {"--suite periodic --G 2s", "--G: G=2 s is over the 1 s limit per burst"}};
  for (const auto& [flags, needle] : cases) {
    expect_refused(s, kTool, cal + flags, 2, {"xstage-calibrate: error: " + needle});
    EXPECT_FALSE(contains(s.run(kTool, cal + flags).err, "config.blocks")) << flags;
  }
  write_file(s.path("sweep.json"), R"({"target": "host", "defaults": {"repetitions": 0},
    "blocks": [{"name": "a", "suite": "periodic", "K": "1", "B": "16KiB", "G": "0"}]})");
  expect_refused(s, kTool, cal + "--config sweep.json --no-fit", 2, {"(block a).repetitions: 0 must be in"});
}

TEST(CalibrateFlags, OutputFolderThatCannotBeCreatedIsExitTwo) {
  Scratch s;
  write_file(s.path("plain"), "a file, not a folder\n");
  expect_refused(s, kTool, "--backend sim --no-progress --out plain/sub/c.json", 2, {"--out", "not a folder"});
  expect_refused(s, kTool, "--backend sim --no-progress --out c.json --csv plain/points.csv", 2,
                 {"--csv", "not a folder"});
  // A folder that can be created is created (for --out and --csv alike).
  const ToolRun r = s.run(kTool, "--backend sim --no-progress --only zero_gap,isolated --out a/c.json --csv b/p.csv");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(read_file(s.path("b/p.csv")).empty());
}

TEST(CalibrateFlags, VersionAndErrorPrefix) {
  Scratch s;
  for (const char* tool : {"xstage-calibrate", "xstage-bench", "xstage-predict", "xstage-gate"}) {
    const ToolRun r = s.run(tool, "--version");
    EXPECT_EQ(r.rc, 0) << tool;
    EXPECT_TRUE(contains(r.out, std::string(tool) + " ")) << r.out;
    EXPECT_TRUE(contains(r.out, "(git ")) << r.out;
    const std::string name = tool;
    const std::string prefix = name == "xstage-predict" ? "burst "
                               : name == "xstage-gate"  ? "--baseline b.json --candidate c.json --config g.json "
                                                        : "";
    expect_refused(s, tool, prefix + "--no-such-flag", 2, {"--no-such-flag"});
  }
}

TEST(CalibrateFlags, PointsTableAsCsvAndMarkdown) {
  Scratch s;
  const ToolRun r = s.run(kTool, "--backend sim --no-progress --only zero_gap,gap_sweep,isolated --out c.json "
                                 "--points --csv points.csv --md");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string csv = read_file(s.path("points.csv"));
  EXPECT_EQ(csv.rfind("id,suite,K,B_bytes,G_s,T_iss_median_s,T_iss_p10_s,T_iss_p90_s,T_iss_pred_s,T_iss_rel_err,", 0), 0u)
      << csv.substr(0, 300);
  EXPECT_TRUE(contains(csv, "clock_flagged,verification"));
  EXPECT_TRUE(contains(r.out, "| id | suite | K |")) << r.out.substr(0, 500);
}

}  // namespace
