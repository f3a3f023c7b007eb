// xstage remote_store slice (io): --csv FILE / --md for xstage-bench and xstage-calibrate (--points): one row per
// point with median, p10, p90, the model's prediction, the relative error against it, the clock-flag marker and
// the data verification, through report::Table.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "xs/report/output_set.hpp"
#include "xs/report/records.hpp"
#include "xs/report/table.hpp"

namespace xs::remote_store {

struct TableOutputs {
  std::string csv_path;   // --csv FILE (written with the result file, all or none)
  bool markdown = false;  // --md: Markdown table on stdout instead of the plain table
};

// Columns: id, suite, K, B_bytes, G_s, T_iss_median_s, T_iss_p10_s, T_iss_p90_s, T_iss_pred_s,
// T_iss_rel_err, T_period_median_s, T_period_p10_s, T_period_p90_s, T_period_pred_s, T_period_rel_err,
// clock_flagged ("yes"/"no"), verification ("ok", "unchecked", "WRONG n words" or "skipped: why").
// Missing values (no prediction, isolated periods) are empty CSV fields / "-" in Markdown.
report::Table points_table(const std::vector<PointRecord>& points);

// Before measuring: --csv must be writable (a file, or "-" / /dev/stdout / /dev/stderr); --csv on stdout
// cannot share it with --md or `json` (--json), which print there too (input_error, exit 2).
void check_table_outputs(const TableOutputs& outputs, bool json);
// Where the tool's own table and "wrote ..." lines go: stdout, or stderr while --csv streams on stdout.
std::FILE* human_output(const TableOutputs& outputs);

// Writes the command's `files` (its --out) and --csv as one set (report/output_set.hpp: all or none, creating their
// folders; --csv may be a stream) and then, with --md, the Markdown table to stdout.
void write_table_outputs(const report::Table& table, const TableOutputs& outputs,
                         std::vector<report::PendingOutput> files = {});

}  // namespace xs::remote_store
