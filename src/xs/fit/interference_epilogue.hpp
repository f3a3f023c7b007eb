// xstage fit layer: the interference term of form "epilogue_per_byte" (model/interference.hpp, eq. I2) from the
// loaded suite's epilogue-injection points: K CTAs each run a mainloop tile, then store V bytes from the same
// warps, then the next tile (the applications' pattern). Per point the calibration measures the mean time per
// tile with the stores, T, and without them, T0 (the same kernel with V = 0). The fitted closed-loop law:
//   T = max(T0 + a(K) V, K V / R_eff),      a(K) = a_ref (K / K_ref)^gamma
// a: the time a tile loses per byte its CTA stores (issue and interference below the drain bound); the second
// branch: the path drains K V bytes per tile at R_eff. Fitted on log T by least squares over a (gamma, R_eff)
// grid, with 95% intervals from a bootstrap over points and repetitions, the between-point misfit beside them,
// and held-out validation: leave one K out, leave one V out. Identification rules are in the .cpp.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/model/interference.hpp"
#include "xs/report/records.hpp"

namespace xs::fit {

// One epilogue-injection point on the remote path (the caller filters the target and skipped points).
struct EpilogueObs {
  std::string block;                // sweep block (for the notes)
  int num_sms = 0;                  // K: CTAs storing
  double bytes_per_tile = 0;        // V: bytes one CTA stores after each tile
  std::vector<double> t_samples;    // mean time per tile with the stores, per repetition
  std::vector<double> t0_samples;   // mean time per tile without them (baseline launch), per repetition
};

struct EpilogueFitOptions {
  int bootstrap_resamples = 300;
  std::uint64_t seed = 2812;
  // A fitted law whose held-out (leave one K out / one V out) median |T_pred / T - 1| exceeds this is
  // contradicted by its own data: the term is then "not identified".
  double max_held_out_error = 0.25;
  // A point counts as slowed when its T / T0 exceeds 1 by this much; fewer than two slowed points with
  // different V: the data are flat and a is only bounded above.
  double min_effect = 0.03;
};

struct EpiloguePointFit {
  int num_sms = 0;
  double bytes_per_tile = 0, t0_s = 0, t_s = 0;  // medians over repetitions
  double predicted_s = 0;                         // in-sample (all points fitted)
  double held_out_k_s = 0, held_out_v_s = 0;      // fitted without this point's K / V (0: not computable)
  bool drain_bound = false;                       // K V / R_eff > T0 + a V at the fitted values
  std::string block;
};

struct EpilogueFit {
  model::InterferenceTerm term;  // form epilogue_per_byte (status, why, parameters)
  std::vector<EpiloguePointFit> points;
  double in_sample_median_abs_error = 0, held_out_k_median_abs_error = 0, held_out_k_p90_abs_error = 0;
  double held_out_v_median_abs_error = 0, held_out_v_p90_abs_error = 0;
  // The same leave-one-V-out prediction judged on the excess time T - T0 of the points slowed below the drain
  // bound only (the points that inform a(K)): |excess_pred / excess - 1|, median; NaN with none. The ratios of
  // whole times above are dominated by drain-bound points and by T0, and miss a wrong per-byte form.
  double held_out_v_excess_median_abs_error = NAN;
  int num_informative_points = 0;
  double drain_rate_bps = 0, drain_rate_lo = 0, drain_rate_hi = 0;
  bool drain_rate_identified = false;  // some point is drain-bound over the whole bootstrap
  std::vector<std::string> notes;
};

// Throws input_error for an observation with K < 1, V <= 0, or empty / unequal / non-positive samples.
// Fewer than 3 points: "not identified" (never thrown).
EpilogueFit fit_epilogue(const std::vector<EpilogueObs>& obs, const EpilogueFitOptions& options = {});

// The file's epilogue-injection loaded points on `target` (skipped points and points without the epilogue
// measurement left out): V = B / tiles_per_burst per tile, T = mean (mainloop + epilogue) per tile, T0 = the
// baseline's mean mainloop per tile, per repetition.
std::vector<EpilogueObs> epilogue_obs_of(const std::vector<PointRecord>& points, const std::string& target);
bool has_epilogue_points(const std::vector<PointRecord>& points);

// The fit as the calibration file's extra.interference block: model::to_json(term) plus {target, equation,
// fit{points[], drain_rate, notes}, validation{in_sample, held_out_k, held_out_v}}.
nlohmann::json epilogue_block(const EpilogueFit& fit, const std::string& target);

}  // namespace xs::fit
