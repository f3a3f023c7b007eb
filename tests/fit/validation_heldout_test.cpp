// xstage fit tests: held-out validation (cross_validate): the split covers every validated point once,
// no held-out prediction comes from a fit that saw the point, and failed or unidentified folds leave their
// points counted as unpredicted with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "xs/common/error.hpp"
#include "xs/fit/fit.hpp"
#include "fit_helpers.hpp"

namespace xs::fit {
namespace {

using namespace xs::fit::testing;

// Ids made unique (the sweep measures (K=132, 32 KiB, G=0) twice), so a fitter can tell points apart.
std::vector<PointRecord> noiseless_sim_sweep() {
  sim::SimParams params;
  params.noise = 0;
  auto points = simulate(params, calibration_specs(SweepShape{}, params.drain_rate_bps));
  for (std::size_t i = 0; i < points.size(); ++i) points[i].id += "#" + std::to_string(i);
  return points;
}

FittedModel constant_model(double drain_rate_bps, double tiss0_s, double capacity_bytes) {
  FittedModel m;
  m.platform = model::PlatformModel::constant(drain_rate_bps, tiss0_s, capacity_bytes);
  return m;
}

TEST(FitCrossValidation, FoldsCoverEveryValidatedPointOnceAndKeepEveryKind) {
  auto points = noiseless_sim_sweep();
  points[0].skipped = true;
  points[1].verification.wrong = 3;
  const int k = 5;
  const std::vector<int> fold = assign_folds(points, k);
  ASSERT_EQ(fold.size(), points.size());
  // Per stratum (suite, K, zero-gap): fold sizes differ by at most one (two where a repeat joins its twin).
  std::map<std::tuple<int, int, bool>, std::vector<int>> per_stratum;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const bool validated = validated_point(points[i], "");
    EXPECT_EQ(fold[i] >= 0, validated) << i;  // local controls, skipped and wrong-data points: no fold
    if (!validated) continue;
    ASSERT_LT(fold[i], k);
    auto& counts = per_stratum[{static_cast<int>(points[i].spec.suite), points[i].spec.num_producers,
                                points[i].spec.gap_s > 0}];
    counts.resize(k);
    ++counts[fold[i]];
  }
  EXPECT_EQ(fold[0], -1);
  EXPECT_EQ(fold[1], -1);
  for (const auto& [key, counts] : per_stratum) {
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    EXPECT_LE(*hi - *lo, 2) << "suite " << std::get<0>(key) << " K " << std::get<1>(key);
  }
  // Interleaved over the sweep: neighbours on one gap sweep land in different folds.
  std::map<double, int> sweep;  // G -> fold, (K=132, B=32 KiB) gap sweep
  for (std::size_t i = 0; i < points.size(); ++i)
    if (fold[i] >= 0 && points[i].spec.suite == Suite::kPeriodic && points[i].spec.num_producers == 132 &&
        points[i].spec.bytes_per_producer == 32 * kKiB && points[i].spec.gap_s > 0)
      sweep[points[i].spec.gap_s] = fold[i];
  ASSERT_GT(sweep.size(), 10u);
  for (auto it = std::next(sweep.begin()); it != sweep.end(); ++it) EXPECT_NE(it->second, std::prev(it)->second);
  EXPECT_THROW(assign_folds(points, 1), Error);
  // The sweep measures (K=132, 32 KiB, G=0) twice: both repeats are held out together.
  std::vector<std::size_t> twins;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].spec.suite == Suite::kPeriodic && points[i].spec.num_producers == 132 &&
        points[i].spec.bytes_per_producer == 32 * kKiB && points[i].spec.gap_s == 0)
      twins.push_back(i);
  ASSERT_EQ(twins.size(), 2u);
  EXPECT_EQ(fold[twins[0]], fold[twins[1]]);

  const CrossValidation cv = cross_validate(points, fitted_model(fit_calibration(points)), FitOptions{});
  std::set<std::size_t> seen;
  for (const auto& row : cv.held_out.rows) {
    EXPECT_TRUE(seen.insert(row.point_index).second) << "point " << row.point_index << " predicted twice";
    EXPECT_EQ(row.fold, fold[row.point_index]);
  }
  std::size_t num_validated = 0;
  for (int f : fold) num_validated += f >= 0 ? 1 : 0;
  EXPECT_EQ(seen.size(), num_validated);
  EXPECT_EQ(cv.folds.size(), 5u);
}

// The fitter sees the training points; the test records them and checks every held-out row against them.
TEST(FitCrossValidation, NoHeldOutPredictionComesFromAFitThatSawThePoint) {
  const auto points = noiseless_sim_sweep();
  std::vector<std::set<std::string>> trained_on;
  std::vector<FittedModel> models;
  const Fitter recording = [&](const std::vector<PointRecord>& training) {
    std::set<std::string> ids;
    double sum_s = 0;
    for (const auto& p : training) {
      ids.insert(p.id);
      sum_s += p.issue_time_s.median;
    }
    trained_on.push_back(ids);
    // A model that depends on its training set, so each fold's predictions differ.
    models.push_back(constant_model(717e9, sum_s / static_cast<double>(training.size()), 4 * kMiB));
    return models.back();
  };
  const FittedModel full = constant_model(717e9, 1e-6, 4 * kMiB);
  const CrossValidation cv = cross_validate(points, full, recording);
  ASSERT_EQ(trained_on.size(), 5u);
  for (const auto& row : cv.held_out.rows) {
    ASSERT_GE(row.fold, 0);
    EXPECT_EQ(trained_on[row.fold].count(points[row.point_index].id), 0u) << "point " << row.point_index;
    const Validation by_fold_model = validate({points[row.point_index]}, models[row.fold], full);
    EXPECT_DOUBLE_EQ(row.predicted_issue_s, by_fold_model.rows.at(0).predicted_issue_s);
  }
  // Every training set holds everything outside its fold, local controls included.
  for (int f = 0; f < 5; ++f)
    for (std::size_t i = 0; i < points.size(); ++i)
      EXPECT_EQ(trained_on[f].count(points[i].id), cv.fold_of_point[i] == f ? 0u : 1u);
}

// A memorising fitter (one T_iss^0 row per measured isolated (K,V), as the isolated-floor rows are) has zero
// in-sample error; held out, a point off the smooth T_iss^0(V) curve is predicted from its neighbours.
TEST(FitCrossValidation, InSampleExactHeldOutNot) {
  std::vector<PointRecord> points;
  const std::vector<std::uint64_t> bytes = geometric_bytes(1 * kKiB, 64 * kKiB, 2);
  for (std::size_t j = 0; j < bytes.size(); ++j) {
    const double t0 = 80e-9 + static_cast<double>(bytes[j]) / 40e9 + (j == 3 ? 50e-9 : 0);  // one bump
    points.push_back(exact_point(Suite::kIsolated, 33, bytes[j], 0, t0, 0));
  }
  const Fitter memorise = [](const std::vector<PointRecord>& training) {
    nlohmann::json m = {{"R_Bps", 1e12}, {"R_ci95", {1e12, 1e12}}, {"tiss0", nlohmann::json::array()},
                        {"Q", {{{"K", 33}, {"bytes", 1e9}, {"ci95", {1e9, 1e9}}, {"bound", "lower"}}}}};
    for (const auto& p : training)
      m["tiss0"].push_back({{"K", p.spec.num_producers}, {"V_bytes", static_cast<double>(p.spec.volume_bytes())},
                            {"s", p.issue_time_s.median}});
    FittedModel out;
    out.platform = model::PlatformModel::from_json(m);
    return out;
  };
  const FittedModel full = memorise(points);
  const Validation in_sample = validate(points, full, full);
  EXPECT_EQ(in_sample.regime(Regime::kIsolated).issue_p90_rel_err, 0.0);
  CrossValidationOptions options;
  options.num_folds = 3;
  const CrossValidation cv = cross_validate(points, full, memorise, options);
  EXPECT_EQ(cv.held_out.num_predicted, static_cast<int>(points.size()));
  const ValidationRow& bumped = cv.held_out.rows.at(3);
  ASSERT_EQ(bumped.point_index, 3u);
  EXPECT_GT(bumped.issue_rel_err, 0.1);  // its own 50 ns bump is not in the fit that predicts it
  EXPECT_GT(cv.held_out.regime(Regime::kIsolated).issue_p90_rel_err, 0.05);
  // Held out, the smallest and largest V leave the memorised table (clamped), and are counted as such.
  EXPECT_TRUE(cv.held_out.rows.front().tiss0_extrapolated);
  EXPECT_TRUE(cv.held_out.rows.back().tiss0_extrapolated);
  EXPECT_FALSE(bumped.tiss0_extrapolated);
  EXPECT_EQ(cv.held_out.regime(Regime::kIsolated).num_tiss0_extrapolated, 2);
  EXPECT_EQ(in_sample.regime(Regime::kIsolated).num_tiss0_extrapolated, 0);
}

TEST(FitCrossValidation, FailedAndUnidentifiedFoldsAreCountedWithReasons) {
  const auto points = noiseless_sim_sweep();
  const std::vector<int> fold = assign_folds(points, 5);
  const auto in_fold = [&](int f, const std::vector<PointRecord>& training) {
    // Fold f is held out iff one of its points is missing from the training set.
    for (std::size_t i = 0; i < points.size(); ++i)
      if (fold[i] == f)
        return std::none_of(training.begin(), training.end(), [&](const PointRecord& p) { return p.id == points[i].id; });
    return false;
  };
  const Fitter flaky = [&](const std::vector<PointRecord>& training) {
    if (in_fold(2, training)) throw input_error("points", "no zero-gap periodic points");
    FittedModel m = constant_model(717e9, 1e-6, 4 * kMiB);
    if (in_fold(1, training)) m.drain_unidentified = "R not_identified";
    if (in_fold(3, training)) m.capacity_unidentified = {{33, "Q(K=33) not_identified"}};
    return m;
  };
  const FittedModel full = constant_model(717e9, 1e-6, 4 * kMiB);
  const CrossValidation cv = cross_validate(points, full, flaky);
  std::map<int, int> held, predicted;
  int isolated_33_in_fold3 = 0;
  for (const auto& row : cv.held_out.rows) {
    ++held[row.fold];
    predicted[row.fold] += row.predicted() ? 1 : 0;
    if (row.fold == 2) {
      EXPECT_EQ(row.unpredicted_reason, "fold 2 fit failed: points: no zero-gap periodic points");
    }
    if (row.fold == 1) {
      EXPECT_EQ(row.unpredicted_reason, "fold 1: R not_identified");
    }
    if (row.fold == 3 && row.suite == Suite::kIsolated && row.num_producers == 33) {
      ++isolated_33_in_fold3;
      EXPECT_EQ(row.unpredicted_reason, "fold 3: Q(K=33) not_identified");
    } else if (row.fold == 0 || row.fold == 3 || row.fold == 4) {
      EXPECT_TRUE(row.predicted()) << row.point_index << ": " << row.unpredicted_reason;
    }
  }
  EXPECT_EQ(predicted[1], 0);
  EXPECT_EQ(predicted[2], 0);
  EXPECT_GT(isolated_33_in_fold3, 0);
  EXPECT_EQ(predicted[3], held[3] - isolated_33_in_fold3);
  EXPECT_EQ(cv.folds[2].error, "points: no zero-gap periodic points");
  EXPECT_TRUE(cv.folds[1].error.empty());
  // Counted, not dropped: every held-out point is either predicted or carries a reason.
  int reasons = 0;
  for (const auto& [reason, count] : cv.held_out.unpredicted) reasons += count;
  EXPECT_EQ(cv.held_out.num_predicted + reasons, cv.held_out.num_points);
  EXPECT_EQ(reasons, held[1] + held[2] + isolated_33_in_fold3);
  int regime_points = 0;
  for (const auto& s : cv.held_out.regimes) regime_points += s.num_points;
  EXPECT_EQ(regime_points, cv.held_out.num_points);
  const nlohmann::json j = cv.to_json();
  EXPECT_EQ(j["num_unpredicted"], reasons);
  EXPECT_EQ(j["k"], 5);
  EXPECT_EQ(j["fold_of_point"].size(), points.size());
  EXPECT_EQ(j["folds"][2]["error"], "points: no zero-gap periodic points");
  EXPECT_TRUE(j["folds"][0]["error"].is_null());
}

// With the real fitter on the noiseless simulator (the model is exact there, see validation_fixed_test):
// every fold fits, every point is predicted, and the steady-state regimes stay accurate held out.
TEST(FitCrossValidation, RealFitterOnTheNoiselessSweep) {
  const auto points = noiseless_sim_sweep();
  const CalibrationFit fit = fit_calibration(points);
  const CrossValidation cv = cross_validate(points, fitted_model(fit), FitOptions{});
  for (const auto& f : cv.folds) EXPECT_TRUE(f.error.empty()) << f.fold << ": " << f.error;
  EXPECT_EQ(cv.held_out.num_predicted, cv.held_out.num_points);
  EXPECT_LT(cv.held_out.regime(Regime::kPlateau).issue_median_rel_err, 0.01);
  EXPECT_LT(cv.held_out.regime(Regime::kDrainLimited).period_median_rel_err, 0.02);
}

}  // namespace
}  // namespace xs::fit
