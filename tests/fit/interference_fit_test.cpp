// xstage fit tests: the interference term's fitter on synthetic loaded points with known truth: recovery,
// interval coverage over many seeds, the planted-absent case, data that break the form, and the file block.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"
#include "fit/interference.hpp"
#include "interference_synthetic.hpp"

namespace xs::fit {
namespace {

using testing::PlantedTerm;
using testing::planted_sweep;

InterferenceFitOptions quick(int resamples = 300) {
  InterferenceFitOptions o;
  o.bootstrap_resamples = resamples;
  return o;
}

bool covers(const model::InterferenceParameter& p, double truth) { return p.lo <= truth && truth <= p.hi; }

TEST(InterferenceFit, RecoversThePlantedTerm) {
  const PlantedTerm t;
  const InterferenceFit f = fit_interference(planted_sweep(t, 7), quick());
  ASSERT_EQ(f.term.status, model::InterferenceStatus::kIdentified) << f.term.why;
  EXPECT_EQ(f.term.parameter("k_ref").value, 66);
  EXPECT_TRUE(covers(f.term.parameter("wait_s_at_kref"), t.wait_s));
  EXPECT_TRUE(covers(f.term.parameter("k_exponent"), t.k_exponent));
  EXPECT_NEAR(f.term.parameter("wait_s_at_kref").value / t.wait_s, 1.0, 0.2);
  EXPECT_NEAR(f.term.parameter("k_exponent").value, t.k_exponent, 0.3);
  EXPECT_NEAR(f.term.parameter("drain_rate_Bps").value / t.drain_rate_bps, 1.0, 0.02);
  // The knee points (1.04 R) enter neither fit.
  for (std::size_t i = 0; i < f.obs.size(); ++i)
    if (f.regime[i] == LoadRegime::kKnee)
      EXPECT_EQ(std::count(f.full_used.begin(), f.full_used.end(), static_cast<int>(i)), 0);
  // A full load at K = 132 predicts what was planted there.
  model::LoadState load;
  load.offered_rate_bps = 2 * t.drain_rate_bps;
  load.drain_rate_bps = t.drain_rate_bps;
  load.num_sms = 132;
  load.tile_time_s = t.tile_time_s;
  const auto s = f.term.slowdown(load);
  const double truth = 1 + t.true_wait_s(132) / t.tile_time_s;
  EXPECT_LE(s.lo, truth);
  EXPECT_GE(s.hi, truth);
  EXPECT_NEAR(s.mid / truth, 1.0, 0.25);
  // Below the knee: s_free.
  load.offered_rate_bps = 0.3 * t.drain_rate_bps;
  EXPECT_NEAR(f.term.slowdown(load).mid, 1.0, 0.05);
}

// Over many seeds the 95% intervals of W_ref and gamma cover the truth in most, and the prediction bracket of a
// new full-path point covers that point (parameter uncertainty + between-point misfit).
TEST(InterferenceFit, IntervalsCoverTheTruth) {
  PlantedTerm t;
  const int seeds = 60;
  int w_cov = 0, g_cov = 0, pred_cov = 0, identified = 0;
  std::mt19937_64 rng(99);
  std::normal_distribution<double> z;
  for (int s = 0; s < seeds; ++s) {
    const InterferenceFit f = fit_interference(planted_sweep(t, 1000 + s), quick(300));
    if (f.term.status != model::InterferenceStatus::kIdentified) continue;
    ++identified;
    w_cov += covers(f.term.parameter("wait_s_at_kref"), t.wait_s);
    g_cov += covers(f.term.parameter("k_exponent"), t.k_exponent);
    const int k = s % 2 ? 132 : 33;
    model::LoadState load;
    load.offered_rate_bps = 3 * t.drain_rate_bps;
    load.drain_rate_bps = t.drain_rate_bps;
    load.num_sms = k;
    load.tile_time_s = t.tile_time_s;
    const double fresh = t.free_slowdown + t.true_wait_s(k) * std::exp(t.misfit_log_sd * z(rng)) / t.tile_time_s;
    const auto b = f.term.slowdown(load);
    pred_cov += b.lo <= fresh && fresh <= b.hi;
  }
  EXPECT_GE(identified, seeds - 2);
  EXPECT_GE(w_cov, 0.85 * identified) << w_cov << "/" << identified;
  EXPECT_GE(g_cov, 0.85 * identified) << g_cov << "/" << identified;
  EXPECT_GE(pred_cov, 0.85 * identified) << pred_cov << "/" << identified;
}

// Planted absent (W = 0): no wait beyond the free scatter. The term says so: W's interval contains 0 and a full
// load's bracket contains 1; gamma is flagged not identified.
TEST(InterferenceFit, PlantedAbsentGivesAWaitIntervalContainingZero) {
  PlantedTerm t;
  t.wait_s = 0;
  const InterferenceFit f = fit_interference(planted_sweep(t, 11), quick());
  ASSERT_EQ(f.term.status, model::InterferenceStatus::kIdentified) << f.term.why;
  const auto& w = f.term.parameter("wait_s_at_kref");
  EXPECT_LE(w.lo, 0.0);
  EXPECT_GE(w.hi, 0.0);
  EXPECT_FALSE(f.term.parameter("k_exponent").constrained);
  model::LoadState load;
  load.offered_rate_bps = 1e30;
  load.drain_rate_bps = t.drain_rate_bps;
  load.num_sms = 132;
  const auto s = f.term.slowdown(load);
  EXPECT_LE(s.lo, 1.0);
  EXPECT_GE(s.hi, 1.0);
  EXPECT_LT(s.hi, 1.3);  // the free scatter (x e^{1.96 x 0.03}) plus W's interval
}

// Data that break the form: the fitter says "not identified" with the reason, never a tight number.
TEST(InterferenceFit, FreeRegimeThatGrowsWithTheRateIsNotIdentified) {
  PlantedTerm t;
  t.free_trend = 2.0;  // s = 1 + 2 rho/R below the knee: the flat free regime does not hold
  const InterferenceFit f = fit_interference(planted_sweep(t, 3), quick());
  EXPECT_EQ(f.term.status, model::InterferenceStatus::kNotIdentified);
  EXPECT_NE(f.term.why.find("grows with the offered rate"), std::string::npos) << f.term.why;
}

TEST(InterferenceFit, HalfTheFullPointsUnslowedIsContradictory) {
  PlantedTerm t;
  t.half_unslowed = true;
  const InterferenceFit f = fit_interference(planted_sweep(t, 5), quick());
  EXPECT_EQ(f.term.status, model::InterferenceStatus::kNotIdentified);
  EXPECT_NE(f.term.why.find("contradictory"), std::string::npos) << f.term.why;
}

TEST(InterferenceFit, LargeMisfitAboutTheFormIsNotIdentified) {
  PlantedTerm t;
  t.misfit_log_sd = 1.5;  // waits scatter x4.5 about W(K)
  int not_identified = 0;
  for (int s = 0; s < 5; ++s)
    not_identified += fit_interference(planted_sweep(t, 40 + s), quick(100)).term.status ==
                      model::InterferenceStatus::kNotIdentified;
  EXPECT_GE(not_identified, 4);
}

TEST(InterferenceFit, OneKLeavesTheExponentNotIdentified) {
  PlantedTerm t;
  std::vector<PointRecord> pts;
  for (auto& p : planted_sweep(t, 9))
    if (p.spec.num_producers == 132) pts.push_back(p);
  const InterferenceFit f = fit_interference(pts, quick());
  ASSERT_EQ(f.term.status, model::InterferenceStatus::kIdentified) << f.term.why;
  EXPECT_FALSE(f.term.parameter("k_exponent").constrained);
  model::LoadState load;
  load.offered_rate_bps = 1e30;
  load.drain_rate_bps = t.drain_rate_bps;
  load.num_sms = 33;
  EXPECT_NE(f.term.outside_calibration(load).find("outside the calibrated"), std::string::npos);
}

TEST(InterferenceFit, LocalControlOnlyAndNoPoints) {
  std::mt19937_64 rng(1);
  std::vector<PointRecord> local = {testing::loaded_point(132, 8192, 0, 1.1, 3e-6, 1e12, 0.01, rng, "local")};
  EXPECT_EQ(fit_interference(local).term.status, model::InterferenceStatus::kNotIdentified);
  EXPECT_THROW(fit_interference({}), Error);
  EXPECT_FALSE(has_loaded_points({}));
}

TEST(InterferenceFit, FileBlockRoundTripsAndValidatesHeldOut) {
  const PlantedTerm t;
  const auto pts = planted_sweep(t, 21);
  const nlohmann::json block = interference_block(pts, quick(200));
  const model::InterferenceTerm term = model::interference_term_from_json(block);
  ASSERT_EQ(term.status, model::InterferenceStatus::kIdentified);
  const InterferenceFit f = fit_interference(pts, quick(200));
  model::LoadState load;
  load.offered_rate_bps = 1e30;
  load.drain_rate_bps = t.drain_rate_bps;
  load.num_sms = 66;
  EXPECT_DOUBLE_EQ(term.slowdown(load).mid, f.term.slowdown(load).mid);
  // Leave-one-block-out: every K block refitted without it; the full-path rows are predicted.
  const auto& ho = block.at("validation").at("held_out");
  EXPECT_EQ(ho.at("folds").size(), 3u);
  EXPECT_GT(ho.at("by_regime").at("full").at("num_predicted").get<int>(), 0);
  EXPECT_TRUE(block.at("validation").at("in_sample").contains("note"));
  // Older files: no block -> not calibrated.
  const auto old = model::interference_term_of_calibration(nlohmann::json{{"extra", nlohmann::json::object()}});
  EXPECT_EQ(old.status, model::InterferenceStatus::kNotCalibrated);
  EXPECT_NE(old.why.find("interference not calibrated"), std::string::npos);
  EXPECT_THROW(old.slowdown(load), std::logic_error);
}

}  // namespace
}  // namespace xs::fit
