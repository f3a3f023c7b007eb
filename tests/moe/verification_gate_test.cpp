// xstage moe unit tests: the MegaMoE verification rule (verification_gate.hpp) on fabricated outputs. A
// correct output passes; an all-zero output, a 1% gain error, one NaN, an unwritten slot and a stray write
// each fail, in both precisions, through the same elementwise rule the device comparison runs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "xs/common/error.hpp"
#include "xs/moe/reference/bf16.hpp"
#include "xs/moe/reference/verification_gate.hpp"

namespace xs::moe {
namespace {

constexpr int kHidden = 256;
constexpr int kSlots = 300;

// A reference of RMS ~0.006 (the runner's outputs at unit-scale inputs), slots 0 mod 7 targeted by no row.
struct Fabricated {
  std::vector<std::uint16_t> ref;
  std::vector<std::uint32_t> writers;
  explicit Fabricated(std::uint64_t seed) : ref(std::size_t(kSlots) * kHidden), writers(kSlots) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> value(0.0, 0.006);
    for (int s = 0; s < kSlots; ++s) {
      writers[s] = s % 7 == 0 ? 0u : 1u;
      for (int c = 0; c < kHidden; ++c)
        ref[std::size_t(s) * kHidden + c] = writers[s] ? double_to_bf16(value(rng)) : kBf16Poison;
    }
  }
  // The output with f applied to every written element (unwritten slots stay poisoned).
  template <class F>
  std::vector<std::uint16_t> output(F f) const {
    std::vector<std::uint16_t> out = ref;
    for (int s = 0; s < kSlots; ++s)
      if (writers[s])
        for (int c = 0; c < kHidden; ++c) out[std::size_t(s) * kHidden + c] = f(ref[std::size_t(s) * kHidden + c]);
    return out;
  }
  CombineVerdict judge(const std::vector<std::uint16_t>& out, const std::string& precision) const {
    const CombineTolerance tol = combine_tolerance(precision, reference_rms_host(ref, writers, kHidden));
    return judge_combine(compare_combine_host(out, ref, writers, kHidden, tol, kBf16Poison), tol);
  }
};

// One bf16 step up or down on every 50th element: what the kernel's fp32 sums in another order give.
std::uint16_t one_step(std::uint16_t bits, std::mt19937_64& rng) {
  return rng() % 50 == 0 ? static_cast<std::uint16_t>(bits + (rng() % 2 ? 1 : -1)) : bits;
}

TEST(VerificationGate, ReferenceRmsIsOverTheWrittenSlots) {
  const Fabricated f(1);
  EXPECT_NEAR(reference_rms_host(f.ref, f.writers, kHidden), 0.006, 0.0003);
}

TEST(VerificationGate, CorrectOutputWithRoundingStepsPasses) {
  const Fabricated f(2);
  std::mt19937_64 rng(3);
  const auto out = f.output([&](std::uint16_t b) { return one_step(b, rng); });
  for (const char* precision : {"bf16", "fp8"}) {
    const CombineVerdict v = f.judge(out, precision);
    EXPECT_TRUE(v.passed) << precision << ": " << v.reason;
  }
}

TEST(VerificationGate, AllZeroOutputFails) {
  const Fabricated f(4);
  const auto zeros = f.output([](std::uint16_t) { return std::uint16_t{0}; });
  for (const char* precision : {"bf16", "fp8"}) {
    const CombineTolerance tol = combine_tolerance(precision, reference_rms_host(f.ref, f.writers, kHidden));
    const CombineCounts c = compare_combine_host(zeros, f.ref, f.writers, kHidden, tol, kBf16Poison);
    EXPECT_DOUBLE_EQ(c.relative_difference, 1.0) << precision;
    // Both halves of the rule fail on their own: most elements lie above the RMS-scaled absolute bound.
    EXPECT_GT(c.wrong_elements, c.compared_elements * 3 / 4) << precision;
    const CombineVerdict v = judge_combine(c, tol);
    EXPECT_FALSE(v.passed) << precision;
    EXPECT_NE(v.reason.find("relative difference"), std::string::npos) << v.reason;
  }
  // The old bf16 rule (abs 1e-2 + rel 1.6e-2, no relative difference) let most of a zero output through.
  const CombineTolerance old_rule{1e-2, 1.6e-2, 2.0};
  const CombineCounts old = compare_combine_host(zeros, f.ref, f.writers, kHidden, old_rule, kBf16Poison);
  EXPECT_LT(old.wrong_elements, old.compared_elements / 4);
}

TEST(VerificationGate, OnePercentGainErrorFailsBf16OnTheRelativeDifference) {
  const Fabricated f(5);
  const auto scaled = f.output([](std::uint16_t b) { return float_to_bf16(bf16_to_float(b) * 1.01f); });
  const CombineVerdict v = f.judge(scaled, "bf16");
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.reason.find("relative difference"), std::string::npos) << v.reason;
}

TEST(VerificationGate, OneNanUnwrittenOrStrayElementFails) {
  const Fabricated f(6);
  auto nan_out = f.ref;
  nan_out[std::size_t(1) * kHidden + 5] = 0x7FC0;  // slot 1 is written
  EXPECT_FALSE(f.judge(nan_out, "bf16").passed);
  auto unwritten = f.ref;
  unwritten[std::size_t(2) * kHidden + 9] = kBf16Poison;
  const CombineVerdict u = f.judge(unwritten, "bf16");
  EXPECT_FALSE(u.passed);
  EXPECT_NE(u.reason.find("not written"), std::string::npos) << u.reason;
  auto stray = f.ref;
  stray[std::size_t(7) * kHidden] = float_to_bf16(0.001f);  // slot 7: no writer
  const CombineVerdict s = f.judge(stray, "bf16");
  EXPECT_FALSE(s.passed);
  EXPECT_NE(s.reason.find("no pool row targets"), std::string::npos) << s.reason;
  EXPECT_TRUE(f.judge(f.ref, "bf16").passed);
}

TEST(VerificationGate, RejectsUnknownPrecisionAndDegenerateReference) {
  EXPECT_THROW(combine_tolerance("fp4", 1.0), Error);
  EXPECT_THROW(combine_tolerance("bf16", 0.0), Error);
  EXPECT_THROW(combine_tolerance("bf16", NAN), Error);
  CombineCounts none;
  EXPECT_FALSE(judge_combine(none, combine_tolerance("bf16", 1.0)).passed);  // nothing compared
}

}  // namespace
}  // namespace xs::moe
