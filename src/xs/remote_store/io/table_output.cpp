// xstage remote_store slice (io): the --csv / --md point tables (see table_output.hpp).
#include "xs/remote_store/io/table_output.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/result_file.hpp"

namespace xs::remote_store {
namespace {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();  // written empty / "-"

double rel_err(double measured, double predicted) {
  return predicted > 0 ? (measured - predicted) / predicted : kNone;
}

std::string verification_text(const PointRecord& p) {
  if (p.skipped) return "skipped: " + p.skip_reason;
  if (p.verification.wrong > 0) return fmt::format("WRONG {} words", p.verification.wrong);
  return p.verification.checked ? "ok" : "unchecked";
}

}  // namespace

report::Table points_table(const std::vector<PointRecord>& points) {
  report::Table t;
  t.columns = {"id", "suite", "K", "B_bytes", "G_s", "T_iss_median_s", "T_iss_p10_s", "T_iss_p90_s",
               "T_iss_pred_s", "T_iss_rel_err", "T_period_median_s", "T_period_p10_s", "T_period_p90_s",
               "T_period_pred_s", "T_period_rel_err", "clock_flagged", "verification"};
  for (const auto& p : points) {
    const bool periodic = p.spec.suite != Suite::kIsolated && !p.skipped;
    const bool measured = !p.skipped;
    const double iss_pred = p.prediction ? p.prediction->issue_time_s : kNone;
    const double per_pred = p.prediction && periodic ? p.prediction->period_s : kNone;
    t.add_row({p.id, std::string(suite_name(p.spec.suite)), double(p.spec.num_producers),
               double(p.spec.bytes_per_producer), p.spec.gap_s,
               measured ? p.issue_time_s.median : kNone, measured ? p.issue_time_s.p10 : kNone,
               measured ? p.issue_time_s.p90 : kNone, iss_pred,
               measured && p.prediction ? rel_err(p.issue_time_s.median, iss_pred) : kNone,
               periodic ? p.period_s.median : kNone, periodic ? p.period_s.p10 : kNone,
               periodic ? p.period_s.p90 : kNone, per_pred,
               periodic && p.prediction ? rel_err(p.period_s.median, per_pred) : kNone,
               std::string(p.clock_flagged ? "yes" : "no"), verification_text(p)});
  }
  return t;
}

void check_table_outputs(const TableOutputs& o, bool json) {
  if (o.csv_path.empty()) return;
  report::check_output_path(o.csv_path, "--csv", report::OutputKind::kFileOrStream);
  if (report::stream_fd(o.csv_path) == 1 && (o.markdown || json))
    throw input_error("--csv", fmt::format("'{}' is stdout, where {} prints too: write the CSV to a file",
                                           o.csv_path, o.markdown ? "--md" : "--json"));
}

std::FILE* human_output(const TableOutputs& o) { return report::stream_fd(o.csv_path) == 1 ? stderr : stdout; }

void write_table_outputs(const report::Table& table, const TableOutputs& o, std::vector<report::PendingOutput> files) {
  if (!o.csv_path.empty()) files.push_back({o.csv_path, "--csv", report::to_csv(table), /*may_stream=*/true});
  report::write_outputs_atomic(files);
  if (o.markdown) report::write_markdown(table, stdout);
}

}  // namespace xs::remote_store
