// xstage fit layer: a calibration file's platform model (calibration_file.hpp).
#include "xs/fit/calibration_file.hpp"

#include <algorithm>
#include <cmath>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/result_file.hpp"

namespace xs::fit {

model::PlatformModel load_platform_model(const std::string& path) {
  return platform_model_from_result_text(report::read_text_file(path), path);
}

model::PlatformModel platform_model_from_result_text(std::string_view text, const std::string& path) {
  // The one strict reader of result files: duplicate or unknown keys, NaN/inf/overflowing numbers, invalid
  // points and another schema are input errors naming the JSON path.
  const report::ResultFile file = report::parse_result_text(text, path);
  if (!file.model.is_object())
    throw Error(ExitCode::kBadInput, "input", "model",  // the field named once, after the file
                path + ": model: null; expected a fitted model section (a calibration file written by "
                       "xstage-calibrate)");
  model::PlatformModel m;
  try {
    m = model::PlatformModel::from_json(file.model);
  } catch (const Error& e) {
    const Error named = report::with_schema_version(e, report::result_schema(file.schema_minor));
    throw Error(named.code(), named.domain(), named.field(), path + ": " + named.what());
  }
  // The isolated bursts behind Q's bracket (PlatformModel::capacity_bracket): measured, not skipped, no clock drop.
  // Its span's maximum sets the bracket, so the summary must hold together: finite, p10 <= max, and no sample above
  // the max where samples are kept.
  std::vector<model::IsolatedBurst> bursts;
  for (std::size_t i = 0; i < file.points.size(); ++i) {
    const PointRecord& p = file.points[i];
    if (p.spec.suite != Suite::kIsolated || p.skipped || p.clock_flagged || !p.issue_time_max_s ||
        !has_values(*p.issue_time_max_s))
      continue;
    const Summary& t = *p.issue_time_max_s;
    double sample_max = t.max;
    for (double x : t.samples) sample_max = std::max(sample_max, x);
    if (!std::isfinite(t.max) || !std::isfinite(t.p10) || t.p10 < 0 || t.p10 > t.max || sample_max > t.max)
      throw input_error("points[" + std::to_string(i) + "].issue_time_max_s",
                        path + ": points[" + std::to_string(i) + "].issue_time_max_s: p10 " + std::to_string(t.p10) +
                            ", max " + std::to_string(t.max) + " s do not hold together; expected 0 <= p10 <= max, "
                            "every sample <= max");
    bursts.push_back({p.spec.num_producers, static_cast<double>(p.spec.volume_bytes()), t.p10, t.max});
  }
  m.set_isolated_bursts(std::move(bursts));
  if (!m.drain_rate_identified())
    throw input_error("model.R_bound", path + ": R not identified by this calibration (R_bound \"not_identified\"): "
                                       "it cannot predict; recalibrate with zero-gap periodic points over several V");
  return m;
}

}  // namespace xs::fit
