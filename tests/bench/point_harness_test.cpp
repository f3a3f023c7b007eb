// Tests for bench/point_harness: fake variants record every call, so the order the harness owns (skip,
// poison before each verified launch, the exchange's barriers, instrumented launches, rotating timed rounds)
// and the failure reporting are asserted on the recorded sequence.
#include "xs/bench/point_harness.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "xs/common/error.hpp"

namespace xs::bench {
namespace {

using Log = std::vector<std::string>;

// A plan of `names` verified variants and `num_timed` timed ones whose every call appends to `log`.
// A variant named in `failing` fails its check; one named `throwing` throws from its check.
PointPlan fake_plan(Log& log, const std::vector<std::string>& names, std::size_t num_timed,
                    const std::vector<std::string>& failing = {}, const std::string& throwing = "") {
  PointPlan plan;
  for (const std::string& n : names) {
    VerifiedVariant v;
    v.name = n;
    v.poison = [&log, n] { log.push_back("poison " + n); };
    v.launch = [&log, n] { log.push_back("launch " + n); };
    v.check = [&log, n, failing, throwing] {
      log.push_back("check " + n);
      if (n == throwing) throw std::runtime_error("device fault in " + n);
      return std::find(failing.begin(), failing.end(), n) == failing.end();
    };
    plan.verified.push_back(v);
  }
  plan.instrument = [&log] { log.push_back("instrument"); };
  plan.timing.num_variants = num_timed;
  plan.timing.warmup = 1;
  plan.timing.repetitions = 3;
  plan.timing.prepare = [&log] {
    log.push_back("prepare timing");
    return RoundReplay([&log](std::size_t v, bool kept) {
      log.push_back("replay " + std::to_string(v) + (kept ? "" : " warmup"));
      return static_cast<double>(v);
    });
  };
  return plan;
}

std::size_t index_of(const Log& log, const std::string& entry) {
  const auto it = std::find(log.begin(), log.end(), entry);
  EXPECT_NE(it, log.end()) << "never called: " << entry;
  return static_cast<std::size_t>(it - log.begin());
}

std::size_t first_starting_with(const Log& log, const std::string& prefix) {
  for (std::size_t i = 0; i < log.size(); ++i)
    if (log[i].rfind(prefix, 0) == 0) return i;
  return log.size();
}

TEST(PointHarness, SkipShortCircuits) {
  Log log;
  bool prepared = false;
  const PointOutcome out = run_point_harness([] { return std::optional<std::string>("no sm_90 GPU"); },
                                             [&] {
                                               prepared = true;
                                               return fake_plan(log, {"a"}, 1);
                                             });
  EXPECT_EQ(out.skip_reason, "no sm_90 GPU");
  EXPECT_FALSE(prepared);
  EXPECT_TRUE(log.empty());
  EXPECT_TRUE(out.rounds.empty());
  EXPECT_FALSE(out.verified);
  EXPECT_FALSE(out.verification_failed);
}

TEST(PointHarness, PoisonsRightBeforeEachVerifiedLaunchInTheGivenOrder) {
  Log log;
  const PointOutcome out = run_point_harness({}, [&] {
    PointPlan p = fake_plan(log, {"a", "b", "c"}, 1);
    p.verify_order = {1, 2, 0};
    return p;
  });
  EXPECT_TRUE(out.skip_reason.empty());
  EXPECT_TRUE(out.verified);
  const Log expected = {"poison b", "launch b", "check b", "poison c", "launch c", "check c",
                        "poison a", "launch a", "check a"};
  ASSERT_GE(log.size(), expected.size());
  EXPECT_EQ(Log(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(expected.size())), expected);
}

TEST(PointHarness, ExchangedVariantsMeetAroundPoisonLaunchAndCheck) {
  for (bool before : {false, true}) {
    Log log;
    run_point_harness({}, [&] {
      PointPlan p = fake_plan(log, {"local", "fused"}, 1);
      p.verified[1].exchanged = true;
      p.exchange.barrier = [&log] { log.push_back("barrier"); };
      p.exchange.meet_before_poison = before;
      return p;
    });
    Log expected = {"poison local", "launch local", "check local"};
    if (before) expected.push_back("barrier");
    for (const char* e : {"poison fused", "barrier", "launch fused", "barrier", "check fused", "barrier"})
      expected.push_back(e);
    ASSERT_GE(log.size(), expected.size());
    EXPECT_EQ(Log(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(expected.size())), expected)
        << "meet_before_poison " << before;
    // Every timed replay is preceded by a barrier.
    for (std::size_t i = first_starting_with(log, "replay"); i < log.size(); ++i) {
      if (log[i].rfind("replay", 0) == 0) {
        EXPECT_EQ(log[i - 1], "barrier") << i;
      }
    }
  }
}

TEST(PointHarness, RoundRobinRotatesTheFirstVariantAndTimesEachEqually) {
  Log log;
  const auto samples = time_round_robin(3, 2, 4, [&](std::size_t v, bool kept) {
    log.push_back(std::to_string(v) + (kept ? "" : "w"));
    return 100.0 * static_cast<double>(v) + static_cast<double>(log.size());  // log.size() < 100
  });
  // 6 rounds of 3: round k starts at variant k mod 3; the first 2 are warm-up rounds.
  const Log expected = {"0w", "1w", "2w", "1w", "2w", "0w", "2", "0", "1", "0", "1", "2", "1", "2", "0",
                        "2", "0", "1"};
  EXPECT_EQ(log, expected);
  ASSERT_EQ(samples.size(), 3u);
  for (std::size_t v = 0; v < 3; ++v) {
    EXPECT_EQ(samples[v].size(), 4u) << v;
    for (double s : samples[v]) EXPECT_EQ(static_cast<int>(s) / 100, static_cast<int>(v)) << "a sample in the wrong slot";
  }
  EXPECT_THROW(time_round_robin(0, 0, 1, [](std::size_t, bool) { return 0.0; }), Error);
  EXPECT_THROW(time_round_robin(2, -1, 1, [](std::size_t, bool) { return 0.0; }), Error);
  EXPECT_THROW(time_round_robin(2, 0, 0, [](std::size_t, bool) { return 0.0; }), Error);
}

TEST(PointHarness, TimedRoundsRotateInsideThePointAndEveryVariantGetsTheSameRounds) {
  Log log;
  const PointOutcome out = run_point_harness({}, [&] { return fake_plan(log, {"a"}, 4); });
  ASSERT_EQ(out.rounds.size(), 4u);
  for (const auto& r : out.rounds) EXPECT_EQ(r.size(), 3u);
  std::vector<std::string> firsts;  // the first replay of each of the 4 rounds
  const std::size_t first = first_starting_with(log, "replay");
  ASSERT_EQ(log.size() - first, 16u);
  for (std::size_t k = 0; k < 4; ++k) firsts.push_back(log[first + 4 * k]);
  EXPECT_EQ(firsts, (std::vector<std::string>{"replay 0 warmup", "replay 1", "replay 2", "replay 3"}));
}

TEST(PointHarness, InstrumentedLaunchesRunOnceAfterVerificationAndBeforeTheTimedRounds) {
  Log log;
  run_point_harness({}, [&] { return fake_plan(log, {"a", "b"}, 2); });
  EXPECT_EQ(std::count(log.begin(), log.end(), "instrument"), 1);
  const std::size_t instrument = index_of(log, "instrument");
  EXPECT_GT(instrument, index_of(log, "check b"));
  EXPECT_LT(instrument, index_of(log, "prepare timing"));
  EXPECT_LT(index_of(log, "prepare timing"), first_starting_with(log, "replay"));
}

TEST(PointHarness, AFailedCheckIsReportedAndTheOthersStillRun) {
  Log log;
  const PointOutcome out = run_point_harness({}, [&] { return fake_plan(log, {"a", "b", "c"}, 1, {"b"}); });
  EXPECT_FALSE(out.verified);
  EXPECT_TRUE(out.verification_failed);
  EXPECT_EQ(out.failed_variants, (std::vector<std::string>{"b"}));
  index_of(log, "check c");  // as the runners always did: every variant verified, then timed
  EXPECT_EQ(out.rounds.size(), 1u);
}

TEST(PointHarness, AThrowingCheckStopsThePoint) {
  Log log;
  EXPECT_THROW(run_point_harness({}, [&] { return fake_plan(log, {"a", "b", "c"}, 1, {}, "b"); }),
               std::runtime_error);
  EXPECT_EQ(log.back(), "check b");
  EXPECT_EQ(std::count(log.begin(), log.end(), "instrument"), 0);
  EXPECT_EQ(first_starting_with(log, "replay"), log.size());
}

TEST(PointHarness, WithoutVerificationOnlyTheAlwaysVariantsRunAndNothingFails) {
  Log log;
  const PointOutcome out = run_point_harness({}, [&] {
    PointPlan p = fake_plan(log, {"baseline", "fused"}, 1, {"baseline"});
    p.verify = false;
    p.verified[0].always = true;
    return p;
  });
  EXPECT_FALSE(out.verified);
  EXPECT_FALSE(out.verification_failed);
  EXPECT_TRUE(out.failed_variants.empty());
  index_of(log, "launch baseline");
  EXPECT_EQ(std::count(log.begin(), log.end(), "launch fused"), 0);
}

TEST(PointHarness, BadTimingIsRefusedBeforeTheGraphsArePrepared) {
  Log log;
  EXPECT_THROW(run_point_harness({}, [&] {
    PointPlan p = fake_plan(log, {"a"}, 2);
    p.timing.repetitions = 0;
    return p;
  }), Error);
  EXPECT_EQ(std::count(log.begin(), log.end(), "prepare timing"), 0);
}

}  // namespace
}  // namespace xs::bench
