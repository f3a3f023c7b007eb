// The epilogue_per_byte interference fit (src/xs/fit/interference_epilogue.hpp): recovery of a planted closed-loop
// law, its intervals' coverage with between-point offsets the law does not have, flat data, data that break
// the law, and the model's evaluation of the fitted term.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "xs/common/error.hpp"
#include "xs/fit/interference_epilogue.hpp"
#include "xs/model/interference.hpp"

namespace xs::fit {
namespace {

struct Truth {
  double a_ref = 2e-10, gamma = 0.5, r = 50e9, t0 = 3e-6;
  double rep_noise = 0.02, point_offset = 0.0;  // lognormal sd per repetition / per point
};

double law(const Truth& t, int k, double v) {
  return std::max(t.t0 + t.a_ref * std::pow(k / 132.0, t.gamma) * v, k * v / t.r);
}

// The volumes per K: the first H100 run's (2 to 128 KiB; at these truths only the 2 KiB points at K 33 and 66
// sit below the drain bound) and, with `wide`, configs/calibrate/loaded-epilogue-wide.json's extra points below it.
std::vector<double> volumes(int k, bool wide) {
  std::vector<double> v = {2048.0, 8192.0, 32768.0, 131072.0};
  if (wide) {
    if (k == 132) v.insert(v.end(), {512.0, 1024.0});
    if (k == 66) v.insert(v.end(), {1024.0, 1536.0});
    if (k == 33) v.insert(v.end(), {3072.0, 4096.0});
  }
  return v;
}

std::vector<EpilogueObs> make(const Truth& t, std::uint64_t seed,
                              const std::function<double(int, double)>& tile = nullptr, bool wide = true) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::vector<EpilogueObs> obs;
  for (int k : {33, 66, 132})
    for (double v : volumes(k, wide)) {
      EpilogueObs o;
      o.block = "k" + std::to_string(k);
      o.num_sms = k;
      o.bytes_per_tile = v;
      const double offset = std::exp(t.point_offset * z(rng));
      const double truth = tile ? tile(k, v) : law(t, k, v);
      for (int r = 0; r < 5; ++r) {
        o.t0_samples.push_back(t.t0 * std::exp(t.rep_noise * z(rng)));
        o.t_samples.push_back(truth * offset * std::exp(t.rep_noise * z(rng)));
      }
      obs.push_back(o);
    }
  return obs;
}

TEST(EpilogueFit, RecoversAPlantedLawAndPredictsHeldOutPoints) {
  const Truth t;
  EpilogueFitOptions o;
  o.bootstrap_resamples = 120;
  const EpilogueFit f = fit_epilogue(make(t, 1), o);
  ASSERT_EQ(f.term.status, model::InterferenceStatus::kIdentified) << f.term.why;
  const auto& a = f.term.parameter("cost_s_per_byte_at_kref");
  EXPECT_LE(a.lo, t.a_ref);
  EXPECT_GE(a.hi, t.a_ref);
  EXPECT_TRUE(a.constrained);
  const auto& g = f.term.parameter("k_exponent");
  EXPECT_LE(g.lo, t.gamma + 1e-9);
  EXPECT_GE(g.hi, t.gamma - 1e-9);
  EXPECT_LT(f.held_out_k_median_abs_error, 0.1);
  EXPECT_LT(f.held_out_v_median_abs_error, 0.1);
  // K 132 x 128 KiB at 50 GB/s (346 us) is far above T0 + aV (29 us): drain-bound, and R recovered.
  EXPECT_TRUE(f.drain_rate_identified);
  EXPECT_LE(f.drain_rate_lo, t.r * 1.0);
  EXPECT_GE(f.drain_rate_hi, t.r * 1.0);
}

// The first H100 run's design: every point but two (2 KiB at K 33 and 66) on the drain bound. Those two cannot
// tell a per-byte cost from a per-tile one: a truth with a constant 9% per-tile cost and no per-byte cost fits
// the per-byte law as well. The term must say "not identified", naming why (a review planted exactly this and
// the fit came back "identified" with a_ref 8x the truth).
TEST(EpilogueFit, TwoPointsBelowTheDrainBoundAtOneVolumeDoNotIdentifyThePerByteCost) {
  const Truth t;
  EpilogueFitOptions o;
  o.bootstrap_resamples = 80;
  const auto per_tile = [&](int k, double v) { return std::max(1.09 * t.t0, k * v / t.r); };
  for (const auto& obs : {make(t, 11, nullptr, false), make(t, 12, per_tile, false)}) {
    const EpilogueFit f = fit_epilogue(obs, o);
    EXPECT_EQ(f.term.status, model::InterferenceStatus::kNotIdentified);
    EXPECT_NE(f.term.why.find("cannot be told from a per-tile one"), std::string::npos) << f.term.why;
  }
  // With the wide design (8 points below the bound at 6 volumes) the per-tile truth still fits the per-byte law
  // as "identified": a known limit of the form's check (the whole-time held-out errors stay near 1%, dominated
  // by drain-bound points). The excess-time diagnostic is what shows it: far larger than for the true law.
  const EpilogueFit wide = fit_epilogue(make(t, 13, per_tile, true), o);
  const EpilogueFit right = fit_epilogue(make(t, 13, nullptr, true), o);
  ASSERT_GT(wide.num_informative_points, 4);
  EXPECT_GT(wide.held_out_v_excess_median_abs_error, 1.5 * right.held_out_v_excess_median_abs_error)
      << "per-tile " << wide.held_out_v_excess_median_abs_error << " vs per-byte "
      << right.held_out_v_excess_median_abs_error;
}

// Between-point offsets of 7% (the spread seen between H200 calls), which the law does not have: the 95%
// interval of a_ref must still cover the truth in most seeds (the bootstrap resamples points).
TEST(EpilogueFit, IntervalCoversTheTruthWithBetweenPointOffsets) {
  Truth t;
  t.point_offset = 0.07;
  EpilogueFitOptions o;
  o.bootstrap_resamples = 80;
  int covered = 0, n = 16;
  for (int s = 0; s < n; ++s) {
    const EpilogueFit f = fit_epilogue(make(t, 100 + s), o);
    const auto& a = f.term.parameter("cost_s_per_byte_at_kref");
    covered += a.lo <= t.a_ref && t.a_ref <= a.hi;
  }
  std::printf("a_ref 95%% interval covered the truth in %d of %d seeds (7%% point offsets)\n", covered, n);
  EXPECT_GE(covered, 12);
}

TEST(EpilogueFit, FlatDataGiveAnUpperBoundAndNoExponent) {
  Truth t;
  t.a_ref = 0;
  t.r = 1e15;
  EpilogueFitOptions o;
  o.bootstrap_resamples = 60;
  const EpilogueFit f = fit_epilogue(make(t, 7), o);
  const auto& a = f.term.parameter("cost_s_per_byte_at_kref");
  EXPECT_FALSE(a.constrained);
  EXPECT_LE(a.lo, 0.0 + 1e-15);
  EXPECT_FALSE(f.term.parameter("k_exponent").constrained);
  EXPECT_FALSE(f.drain_rate_identified);
}

// A tile cost that is not per byte (a K-dependent constant, the same at every V): leaving one V out still
// predicts, but leaving one K out cannot, and the term must say so rather than print a number.
TEST(EpilogueFit, DataThatBreakTheLawAreNotIdentified) {
  const Truth t;
  EpilogueFitOptions o;
  o.bootstrap_resamples = 40;
  auto broken = [&](int k, double) { return t.t0 * (k == 66 ? 1.0 : 3.0); };
  const EpilogueFit f = fit_epilogue(make(t, 3, broken), o);
  EXPECT_EQ(f.term.status, model::InterferenceStatus::kNotIdentified);
  EXPECT_NE(f.term.why.find("held-out"), std::string::npos) << f.term.why;
}

TEST(EpilogueFit, BadObservationsAreRefusedAndFewPointsAreNotIdentified) {
  EpilogueObs o{"b", 132, 8192, {1e-6}, {1e-6}};
  EXPECT_EQ(fit_epilogue({o, o}).term.status, model::InterferenceStatus::kNotIdentified);
  EpilogueObs bad = o;
  bad.bytes_per_tile = 0;
  EXPECT_THROW(fit_epilogue({o, o, bad}), Error);
  bad = o;
  bad.t0_samples.clear();
  EXPECT_THROW(fit_epilogue({o, o, bad}), Error);
  bad = o;
  bad.t_samples = {-1};
  EXPECT_THROW(fit_epilogue({o, o, bad}), Error);
}

TEST(EpilogueTerm, SlowdownIsOnePlusCostTimesBytesOverTileAndRoundTrips) {
  const Truth t;
  EpilogueFitOptions o;
  o.bootstrap_resamples = 40;
  const EpilogueFit f = fit_epilogue(make(t, 5), o);
  const model::InterferenceTerm term = model::interference_term_from_json(epilogue_block(f, "host"));
  ASSERT_EQ(term.form, model::kEpiloguePerByteForm);
  model::LoadState load;
  load.num_sms = 132;
  load.drain_rate_bps = 50e9;
  load.tile_time_s = 4e-6;
  load.burst_bytes_per_sm = 16384;
  const auto s = term.slowdown(load);
  const double a = term.parameter("cost_s_per_byte_at_kref").value;
  EXPECT_NEAR(s.mid, 1 + a * 16384 / 4e-6, 1e-9);
  EXPECT_LE(s.lo, s.mid);
  EXPECT_GE(s.hi, s.mid);
  load.burst_bytes_per_sm = 0;
  EXPECT_EQ(term.slowdown(load).mid, 1.0);
  load.burst_bytes_per_sm = 16384;
  load.drain_rate_bps = 0;  // the local control
  EXPECT_EQ(term.slowdown(load).hi, 1.0);
  load.drain_rate_bps = 50e9;
  load.burst_bytes_per_sm = 1 << 24;
  EXPECT_NE(term.outside_calibration(load).find("above the calibrated"), std::string::npos);
}

}  // namespace
}  // namespace xs::fit
