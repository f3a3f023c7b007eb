// xstage attention judge layer: the FA-A2A residual E_res(M) predicted with the interference term (issue 28
// item 3). Inputs are frozen as in fa_frozen_prediction.hpp: the calibration (R, Q(K) as Terms), the
// configuration, the FA-only variant of the same point (T_FA at the judged boundary, sigma_FA), and the
// interference term (xs::model::SlowdownSource, from a remote_store.loaded calibration). No quantity of the judged
// fused launches enters it.
//
// The model, a wave replay of the fused kernel: N_t = ceil(tiles / K) output-tile waves of K CTAs (the last one
// partial). Compute-only, each wave lasts L = T_FA / N_t, of which G = sigma_FA M / b_n is the Q-loop. Wave w's
// output tiles (k_w B_t bytes) are stored while wave w + 1 computes: the offered rate beside wave w + 1 is
// k_w B_t / L, the outstanding bytes q are those issued and not drained at R. The interference term's
// slowdown s stretches that wave's Q-loop: it lasts G + G (s - 1). An issue that would pass Q waits for room.
//   E_res(sender side)  = sum_w G (s_w - 1) + capacity waits + [q_end - Q]+ / R   (the last stores' issue)
//   E_res(completion)   = sum_w G (s_w - 1) + capacity waits + q_end / R          (the fence waits for all)
// where q_end is the queue after the last wave's stores. Q where the calibration does not identify it is a
// bracket: the sender-side value is then an interval [.. Q.hi, .. Q.lo], and a point only where Q is a point.
// The interval spans R's range, Q's range and the term's [lo, hi].
#pragma once
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "xs/attention/model/fa_calibration.hpp"
#include "xs/attention/model/fa_frozen_prediction.hpp"
#include "xs/model/slowdown_source.hpp"

namespace xs::attention::model {

struct FaInterferencePrediction {
  bool computed = false;
  std::string why_not;                  // "interference not calibrated: ..." and the like
  int num_producers = 0;                // K
  double num_waves = 0;                 // N_t
  double wave_s = 0, qloop_s = 0;       // L, G
  double mean_slowdown = 1;             // over the waves that run beside stores (at the point values)
  double extra_compute_s = NAN;         // sum_w G (s_w - 1) at the point values
  // E_res at the two boundaries: point (NaN where a parameter has no point) and interval.
  double sender_point_s = NAN, completion_point_s = NAN;
  Interval sender, completion;
  std::string why_no_point;             // where a point is missing
  // Where the term was evaluated outside its calibration (at any corner): one sentence, empty inside. The
  // prediction then decides nothing (no point; the judge scores it not decided) and the numbers stay as diagnostics.
  std::string term_outside_calibration;
};

// The judged boundary's T_FA and sigma_FA come from in.compute_only. operands_in_l2: whether K and V of all
// heads fit in half of L2 (the LoadState's working-set flag; l2_bytes is the device's L2 size).
FaInterferencePrediction predict_with_interference(const FaFrozenInputs& in, const xs::model::SlowdownSource& term,
                                                   double l2_bytes = 50.0 * 1024 * 1024);

// One evaluation (tests and the reference fit): the replay at fixed R, Q and bracket side (0 lo, 1 mid, 2 hi).
struct FaReplay {
  double extra_compute_s = 0, capacity_wait_s = 0, queue_end_bytes = 0, mean_slowdown = 1;
  std::string term_outside_calibration;  // xs::model::OutsideCalibration::sentence() of the waves' loads
  int below_loads = 0;                   // waves whose load is below the term's calibrated range
  double below_extra_s = 0;              // the most those waves' Q-loops can add (G x (s_hi - 1), summed)
  double sender_s(double r_bps, double q_bytes) const {
    return extra_compute_s + capacity_wait_s + std::max(0.0, queue_end_bytes - q_bytes) / r_bps;
  }
  double completion_s(double r_bps) const { return extra_compute_s + capacity_wait_s + queue_end_bytes / r_bps; }
};
FaReplay replay_fa_waves(const FaFrozenInputs& in, const xs::model::SlowdownSource& term, double r_bps, double q_bytes,
                         int side, double l2_bytes = 50.0 * 1024 * 1024);

nlohmann::json to_json(const FaInterferencePrediction& p);

}  // namespace xs::attention::model
