// xstage fit layer: selects the usable observations from measurement records (see stages.hpp) and the
// helpers every stage shares (fit quality, JSON numbers). Never fitted: skipped points, points that failed
// data verification, points taken under a clock drop (clock_flagged) and points whose recorded median
// disagrees with their own samples (a corrupt or hand-edited record); a note counts each kind.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/fit/stages.hpp"

namespace xs::fit::detail {
namespace {

bool positive_finite(double x) { return std::isfinite(x) && x > 0; }

// The recorded median must be the median of the recorded samples (when there are any).
bool median_matches_samples(const Summary& s) {
  if (s.samples.empty()) return true;
  const double m = median(s.samples);
  return std::abs(m - s.median) <= 1e-9 * std::max(std::abs(m), std::abs(s.median));
}

double relative_spread(const Summary& s) {
  if (s.samples.size() < 2 || !(s.median > 0)) return 0.0;
  const double spread = (quantile(s.samples, 0.9) - quantile(s.samples, 0.1)) / s.median;
  return std::isfinite(spread) ? spread : 0.0;
}

// The remote target: the one named in the options, else the only one the periodic/isolated points use.
std::string pick_target(const std::vector<PointRecord>& points, const FitOptions& options) {
  if (!options.target.empty()) return options.target;
  std::set<std::string> targets;
  for (const auto& p : points)
    if (!p.skipped && p.spec.suite != Suite::kLocalControl && p.spec.suite != Suite::kLoaded)
      targets.insert(p.spec.target);
  if (targets.size() > 1) {
    std::string names;
    for (const auto& t : targets) names += (names.empty() ? "" : ", ") + t;
    throw input_error("target", fmt::format("points mix targets ({}); fit one target at a time "
                                            "(FitOptions::target)", names));
  }
  return targets.empty() ? std::string() : *targets.begin();
}

}  // namespace

Dataset build_dataset(const std::vector<PointRecord>& points, const FitOptions& options) {
  Dataset data;
  data.target = pick_target(points, options);
  int num_skipped = 0, num_wrong = 0, num_other_target = 0, num_bad_value = 0, num_clock = 0, num_mismatch = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const PointRecord& p = points[i];
    if (p.spec.suite == Suite::kLoaded) continue;  // the interference term's data, not the Burst-Gap fit's
    if (p.skipped) { ++num_skipped; continue; }
    if (p.verification.wrong > 0) { ++num_wrong; continue; }
    if (p.clock_flagged) { ++num_clock; continue; }
    // Local-memory controls are accepted under the remote target's name or as "local".
    const bool control = p.spec.suite == Suite::kLocalControl;
    if (p.spec.target != data.target && !(control && p.spec.target == "local")) { ++num_other_target; continue; }
    const bool has_period = p.spec.suite != Suite::kIsolated;
    if (!positive_finite(modelled_issue_time(p).median) || !positive_finite(p.issue_time_s.median) || (has_period && !positive_finite(p.period_s.median)) ||
        p.spec.num_producers < 1 || p.spec.bytes_per_producer == 0 || !(p.spec.gap_s >= 0)) {
      ++num_bad_value;
      continue;
    }
    if (!median_matches_samples(modelled_issue_time(p)) || !median_matches_samples(p.issue_time_s) || (has_period && !median_matches_samples(p.period_s))) {
      ++num_mismatch;
      continue;
    }
    Obs o;
    o.point_idx = i;
    o.suite = p.spec.suite;
    o.num_producers = p.spec.num_producers;
    o.bytes_per_producer = p.spec.bytes_per_producer;
    o.volume_bytes = static_cast<double>(p.spec.volume_bytes());
    o.gap_s = p.spec.gap_s;
    o.num_bursts = p.spec.num_bursts;
    o.warmup_bursts = p.spec.warmup_bursts;
    o.issue_samples = &modelled_issue_time(p).samples;
    o.period_samples = has_period ? &p.period_s.samples : nullptr;
    o.issue_s = modelled_issue_time(p).median;
    o.floor_issue_samples = &p.issue_time_s.samples;
    o.floor_issue_s = p.issue_time_s.median;
    o.period_s = has_period ? p.period_s.median : 0.0;
    o.issue_spread = relative_spread(modelled_issue_time(p));
    o.period_spread = has_period ? relative_spread(p.period_s) : 0.0;
    data.obs.push_back(o);
  }
  if (num_skipped) data.notes.push_back(fmt::format("ignored {} skipped points", num_skipped));
  if (num_wrong)
    data.notes.push_back(fmt::format("left out {} points that failed data verification (wrong > 0)", num_wrong));
  if (num_clock)
    data.notes.push_back(fmt::format("left out {} points taken under a clock drop (clock_flagged)", num_clock));
  if (num_mismatch)
    data.notes.push_back(fmt::format("left out {} points whose recorded median is not the median of their samples",
                                     num_mismatch));
  if (num_other_target)
    data.notes.push_back(fmt::format("ignored {} points of targets other than {}", num_other_target, data.target));
  if (num_bad_value)
    data.notes.push_back(fmt::format("ignored {} points with a non-positive or non-finite median", num_bad_value));
  return data;
}

Values median_values(const Dataset& data) {
  Values v;
  v.issue_s.reserve(data.obs.size());
  v.period_s.reserve(data.obs.size());
  for (const Obs& o : data.obs) {
    v.issue_s.push_back(o.issue_s);
    v.floor_issue_s.push_back(o.floor_issue_s);
    v.period_s.push_back(o.period_s);
  }
  v.count.assign(data.obs.size(), 1);
  return v;
}

double counted_median(const std::vector<int>& idx, const std::vector<double>& values, const std::vector<int>& count) {
  std::vector<double> t;
  for (int i : idx)
    for (int c = 0; c < count[i]; ++c) t.push_back(values[i]);
  return median(t);
}

Quality quality_of(const std::vector<double>& measured, const std::vector<double>& predicted) {
  Quality q;
  q.num_points = static_cast<int>(measured.size());
  if (measured.empty()) {
    q.r_squared = std::numeric_limits<double>::quiet_NaN();
    return q;
  }
  double mean = 0;
  for (double m : measured) mean += m;
  mean /= static_cast<double>(measured.size());
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    ss_res += (measured[i] - predicted[i]) * (measured[i] - predicted[i]);
    ss_tot += (measured[i] - mean) * (measured[i] - mean);
    q.worst_rel_residual = std::max(q.worst_rel_residual, std::abs(measured[i] - predicted[i]) / measured[i]);
  }
  // Measurements that do not vary (a flat plateau, a single point) leave R^2 undefined.
  const bool flat = ss_tot <= 1e-12 * mean * mean * static_cast<double>(measured.size());
  q.r_squared = flat ? std::numeric_limits<double>::quiet_NaN() : 1.0 - ss_res / ss_tot;
  return q;
}

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

}  // namespace xs::fit::detail

namespace xs::fit {

const Summary& modelled_issue_time(const PointRecord& point) {
  if (point.spec.suite == Suite::kIsolated && point.issue_time_max_s && !point.issue_time_max_s->samples.empty())
    return *point.issue_time_max_s;
  return point.issue_time_s;
}

}  // namespace xs::fit
