// tests/cli: the megamoe suite of xstage-bench: listed, its options in its --help group, --dry-run expands
// shape x precision x routing x T x K_SM x D x target without a GPU (and writes nothing), and every bad
// flag value is exit 2 naming the flag and the accepted form, before anything runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
const std::string kTool = "xstage-bench";

TEST(MegaMoeSuite, ListedWithItsOptionsGroup) {
  Scratch s;
  const ToolRun list = s.run(kTool, "--list");
  ASSERT_EQ(list.rc, 0) << list.err;
  EXPECT_TRUE(contains(list.out, "\nmegamoe ")) << list.out;
  const ToolRun help = s.run(kTool, "--help");
  ASSERT_EQ(help.rc, 0) << help.err;
  const std::size_t group = help.out.find("Options of the megamoe suite");
  ASSERT_NE(group, std::string::npos) << help.out;
  for (const char* flag : {"--shapes TEXT", "--precision TEXT", "--routing TEXT", "--ksm TEXT", "--block-n", "--D TEXT"})
    EXPECT_NE(help.out.find(flag, group), std::string::npos) << flag << " not in the megamoe group";
}

TEST(MegaMoeSuite, DryRunExpandsEveryAxisWithoutAGpu) {
  Scratch s;
  const ToolRun r = s.run(kTool, "megamoe --shapes dsv4_flash,qwen3_5 --precision bf16,fp8 --routing balanced,skewed "
                                 "--T 2048,6976 --ksm 66,132 --D 0,2 --target host --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "64 points")) << r.out;  // 2 shapes x 2 x 2 x 2 T x 2 K_SM x 2 D
  EXPECT_TRUE(contains(r.out, "megamoe shape=qwen3_5 precision=fp8 routing=skewed T=6976 P=8 K_SM=132 b_n=128 D=2 "
                              "target=host")) << r.out;
  EXPECT_TRUE(contains(r.out, "D=auto")) << r.out;
  EXPECT_TRUE(snapshot(s.dir()).empty());
  const ToolRun all = s.run(kTool, "megamoe --shapes all --dry-run --target local");
  ASSERT_EQ(all.rc, 0) << all.err;
  EXPECT_TRUE(contains(all.out, "8 points")) << all.out;  // the 7 shapes and the synthetic fine-grained DiT
}

TEST(MegaMoeSuite, BadValuesAreRefusedNamingTheFlag) {
  Scratch s;
  expect_refused(s, kTool, "megamoe --shapes nope --dry-run", 2, {"unknown model", "dsv4_flash"});
  expect_refused(s, kTool, "megamoe --precision fp4 --dry-run", 2, {"--precision", "bf16, fp8"});
  expect_refused(s, kTool, "megamoe --routing zipf --dry-run", 2, {"--routing", "balanced, skewed"});
  expect_refused(s, kTool, "megamoe --D -1 --dry-run", 2, {"--D"});
  // 2^31 wrapped to a negative int (auto D) and 2^32 + 1 to D = 1 (hostile review of 2026-12-07 evening).
  expect_refused(s, kTool, "megamoe --D 2147483648 --dry-run", 2, {"--D", "outside 0-1000000"});
  expect_refused(s, kTool, "megamoe --D 4294967297 --dry-run", 2, {"--D"});
  // The dry run refuses what the run would (it printed these, and the run stopped at the point mid-sweep).
  expect_refused(s, kTool, "megamoe --precision fp8 --block-n 256 --target host --dry-run", 2, {"fp8", "b_n = 128"});
  expect_refused(s, kTool, "megamoe --shapes dsv4_flash,dit_moe --block-n 256 --target host --dry-run", 2,
                 {"dit_moe", "--block-n 256"});
  expect_refused(s, kTool, "megamoe --block-n 192 --dry-run", 2, {"--block-n", "128 or 256"});
  expect_refused(s, kTool, "megamoe --backend sim --dry-run", 2, {"--backend", "no simulator"});
  expect_refused(s, kTool, "megamoe --dry-run --csv t.csv", 2, {"--csv"});
  expect_refused(s, kTool, "megamoe --models-file /nonexistent.json --dry-run", 2, {"--models-file"});
  {  // The shape table is an input: --out (or a link to it) may not replace it (hostile review of 2026-12-07 night).
    std::ofstream(s.path("m.json")) << R"({"models": [{"name": "x", "hidden": 256, "intermediate": 128,
      "num_experts": 8, "top_k": 2}]})";
    std::filesystem::create_symlink(s.path("m.json"), s.path("link.json"));
    expect_refused(s, kTool, "megamoe --models-file m.json --shapes x --out m.json --dry-run", 2, {"--models-file"});
    expect_refused(s, kTool, "megamoe --models-file m.json --shapes x --out link.json --target host", 2,
                   {"--models-file"});
  }
  expect_refused(s, kTool, "megamoe --variants interleaved,wave --dry-run", 2, {"--variants", "expert_wave"});
  // From the hostile review of 2026-12-07: these exited 77 ("no usable GPU") and the dry run accepted them; a
  // 1000 x 1000 x 1000 sweep grew to 15 GB before its refusal.
  expect_refused(s, kTool, "megamoe --target host,bogus --dry-run", 2, {"--target", "peer:N"});
  expect_refused(s, kTool, "megamoe --T 0 --dry-run", 2, {"--T", "T=0"});
  expect_refused(s, kTool, "megamoe --ksm 100000 --dry-run", 2, {"--ksm", "K_SM=100000"});
  expect_refused(s, kTool, "megamoe --alpha -1 --dry-run", 2, {"--alpha"});
  expect_refused(s, kTool, "megamoe --gain nan --dry-run", 2, {"--gain"});
  expect_refused(s, kTool, "megamoe --T 1:1000:+1 --ksm 1:1000:+1 --D 1:1000:+1 --dry-run", 2,
                 {"2000000000 points", "cap of 100000"});
  expect_refused(s, kTool, "megamoe --tensor-tflops fast --dry-run", 2, {"--tensor-tflops", "bf16=608,fp8=1020"});
  expect_refused(s, kTool, "megamoe --tensor-tflops fp16=600 --dry-run", 2, {"--tensor-tflops", "does not name a precision"});
  expect_refused(s, kTool, "megamoe --tensor-tflops bf16=600,bf16=700 --dry-run", 2, {"--tensor-tflops", "twice"});
  expect_refused(s, kTool, "megamoe --tensor-tflops bf16=-1 --dry-run", 2, {"--tensor-tflops", "> 0"});
  expect_refused(s, kTool, "megamoe --clock-spread 1.5 --dry-run", 2, {"--clock-spread"});
  expect_refused(s, kTool, "megamoe --clock-floor -0.1 --dry-run", 2, {"--clock-floor"});
}

}  // namespace

namespace {

TEST(MegaMoeSuite, WithoutGpuIsSkipCodeAndWritesNothing) {
  xs::test::Scratch s;
  const xs::test::ToolRun r = s.run("xstage-bench", "megamoe --T 2048 --target host --no-progress --out m.json");
  if (r.rc != 77) GTEST_SKIP() << "a GPU is here (rc " << r.rc << ")";
  EXPECT_TRUE(xs::test::contains(r.err, "CUDA build") || xs::test::contains(r.err, "no usable GPU")) << r.err;
  EXPECT_TRUE(xs::test::snapshot(s.dir()).empty()) << "no journal, no result, no out/ folder";
}

}  // namespace
