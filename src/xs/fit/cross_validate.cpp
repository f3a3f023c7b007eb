// xstage fit layer: held-out validation by k-fold cross-validation (validation.hpp). Each point is predicted
// only by a model fitted on the other folds, so no validation figure comes from a fit that saw the point.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "xs/common/error.hpp"
#include "xs/fit/fit.hpp"
#include "xs/fit/validation_detail.hpp"

namespace xs::fit {

std::vector<int> assign_folds(const std::vector<PointRecord>& points, int num_folds, const std::string& target) {
  if (num_folds < 2) throw input_error("num_folds", fmt::format("expected k >= 2 folds, got {}", num_folds));
  // Stratum key (suite, K, zero-gap first) -> point indices; std::map orders the strata.
  using Stratum = std::tuple<int, int, bool>;
  std::map<Stratum, std::vector<std::size_t>> strata;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (validated_point(points[i], target))
      strata[{static_cast<int>(points[i].spec.suite), points[i].spec.num_producers, points[i].spec.gap_s > 0}]
          .push_back(i);
  std::vector<int> fold(points.size(), -1);
  int running = 0;
  for (auto& [key, members] : strata) {
    std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      const PointSpec& x = points[a].spec;
      const PointSpec& y = points[b].spec;
      return std::tie(x.bytes_per_producer, x.gap_s, a) < std::tie(y.bytes_per_producer, y.gap_s, b);
    });
    // Repeats of one configuration (same B and G; adjacent after the sort) share a fold, so a held-out
    // point is never predicted by a fit that saw its twin.
    for (std::size_t j = 0; j < members.size(); ++j) {
      const PointSpec& s = points[members[j]].spec;
      const bool repeat = j > 0 && points[members[j - 1]].spec.bytes_per_producer == s.bytes_per_producer &&
                          points[members[j - 1]].spec.gap_s == s.gap_s;
      fold[members[j]] = repeat ? fold[members[j - 1]] : running++ % num_folds;
    }
  }
  return fold;
}

CrossValidation cross_validate(const std::vector<PointRecord>& points, const FittedModel& full,
                               const Fitter& fitter, const CrossValidationOptions& options) {
  CrossValidation out;
  out.num_folds = options.num_folds;
  out.fold_of_point = assign_folds(points, options.num_folds, options.target);
  for (int f = 0; f < options.num_folds; ++f) {
    FoldInfo info;
    info.fold = f;
    // Training: every point not held out in this fold (points outside the split, fold -1, always train).
    std::vector<PointRecord> training;
    std::vector<std::size_t> held_out;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (out.fold_of_point[i] == f)
        held_out.push_back(i);
      else
        training.push_back(points[i]);
    }
    info.num_training = static_cast<int>(training.size());
    info.num_held_out = static_cast<int>(held_out.size());
    FittedModel model;
    try {
      model = fitter(training);
    } catch (const Error& e) {
      info.error = e.what();
    }
    for (std::size_t i : held_out) {
      const Regime regime = detail::classify(points[i].spec, full, options.boundaries);
      ValidationRow row;
      if (info.error.empty()) {
        row = detail::predict_row(points[i], i, model, regime);
        if (!row.predicted()) row.unpredicted_reason = fmt::format("fold {}: {}", f, row.unpredicted_reason);
      } else {
        row = detail::unpredicted_row(points[i], i, regime, fmt::format("fold {} fit failed: {}", f, info.error));
      }
      row.fold = f;
      out.held_out.rows.push_back(row);
    }
    out.folds.push_back(info);
  }
  std::sort(out.held_out.rows.begin(), out.held_out.rows.end(),
            [](const ValidationRow& a, const ValidationRow& b) { return a.point_index < b.point_index; });
  detail::summarise(out.held_out);
  return out;
}

CrossValidation cross_validate(const std::vector<PointRecord>& points, const FittedModel& full,
                               const FitOptions& fit_options, const CrossValidationOptions& options) {
  return cross_validate(
      points, full,
      [&](const std::vector<PointRecord>& training) { return fitted_model(fit_calibration(training, fit_options)); },
      options);
}

nlohmann::json CrossValidation::to_json() const {
  nlohmann::json j = held_out.to_json();
  j["k"] = num_folds;
  j["rule"] = kFoldRule;
  j["fold_of_point"] = fold_of_point;
  j["folds"] = nlohmann::json::array();
  for (const FoldInfo& f : folds)
    j["folds"].push_back({{"fold", f.fold},
                          {"num_training", f.num_training},
                          {"num_held_out", f.num_held_out},
                          {"error", f.error.empty() ? nlohmann::json() : nlohmann::json(f.error)}});
  return j;
}

}  // namespace xs::fit
