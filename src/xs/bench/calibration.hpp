// xstage bench layer: turns measured calibration records into a calibration file: fit M_X with the fit
// layer, validate it on held-out points (k-fold, refitting per fold), store the full model's in-sample
// prediction beside each measurement, and record the copy-engine reference next to R. Used by
// xstage-calibrate and --refit.
#pragma once
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "xs/fit/fit.hpp"
#include "xs/report/result_file.hpp"

namespace xs::bench {

// A lower bound on Q below this says nothing (every path holds a few requests; the fit clamps an empty bound to
// 1 B): the summary and xstage-predict say "not bounded by this sweep", never print "Q >= 1 B".
inline constexpr double kTrivialCapacityBoundBytes = 1024;

struct Reference {
  std::string target;
  std::optional<double> copy_engine_bps;  // e.g. cudaMemcpyAsync D2H from pinned memory, same run
};

// Fits and validates; fills file.model, file.validation ({held_out, in_sample, regime_boundaries}, see
// docs/result-schema.md), file.extra["reference"] and every point's prediction. `file.points` must hold
// the records; meta/config are left as given.
void analyse_calibration(report::ResultFile& file, const std::optional<Reference>& reference,
                         const fit::FitOptions& options = {});

// Readable summary: R with CI (and R / copy-engine), T_iss^0 table, Q table with bounds flagged,
// held-out validation per regime (median/p90, unpredicted points) and the labelled in-sample line, skipped
// and wrong counts.
void print_calibration_summary(const report::ResultFile& file, std::FILE* out);

// The loaded suite's points, if any: block-free table of K, B, G, offered rate K B / G, mainloop time per tile
// with and without the stores, slowdown [p10, p90], issued rate, drain tail; nothing when there are none.
void print_loaded_summary(const std::vector<PointRecord>& points, std::FILE* out);

// Readable table of points (id, K, B, G, T_iss median [p10,p90], T_period, prediction).
void print_points_table(const std::vector<PointRecord>& points, std::FILE* out);

}  // namespace xs::bench
