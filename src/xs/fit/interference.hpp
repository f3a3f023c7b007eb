// xstage fit layer: the interference term (issue 28 item 2) from a calibration's `remote_store.loaded` points:
// which points see a full path, the free slowdown below the knee, the full-path wait W(K) = W_ref (K/K_ref)^gamma
// with 95% point+repetition bootstrap intervals, and its held-out validation (leave one sweep block out).
// The form and its evaluation live in model/interference.hpp; docs/interference-model.md gives the equation.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/model/interference.hpp"
#include "xs/report/records.hpp"
#include "xs/report/result_file.hpp"

namespace xs::fit {

struct InterferenceFitOptions {
  int bootstrap_resamples = 1000;
  std::uint64_t seed = 12345;
  // |offered / R - 1| < knee_band: a transition point (the path is full part of the time), in neither fit.
  // On the H100 host path the points at 1.04 R scatter from 1.5x to 115x between repetitions.
  double knee_band = 0.1;
  // A full-path point's wait must exceed the free points' scatter by this many log standard deviations for
  // the wait to count as present (else the term is "no wait", or contradictory when the points disagree).
  double presence_sigmas = 3.0;
  // The full-path waits contradict the form when their log scatter about W(K) exceeds this (x e^0.7 = 2x).
  double max_misfit_log_sd = 0.7;
  // The form says the slowdown below the knee does not depend on the offered rate: a fitted rise from
  // rho = 0 to rho = R larger than this (and its interval excluding 0) contradicts it.
  double max_free_trend = 0.25;
  std::string target;  // remote target to fit ("host", "peer:1"); empty: the points must name one
  // false (default): a wait fitted from censored full-path points (burst cap reached) is a lower bound and the
  // term is "not identified". true: they are read as measured (a diagnostic: the validation of the lower bound).
  bool censored_as_measured = false;
};

enum class LoadRegime { kFree, kKnee, kFull };
const char* load_regime_name(LoadRegime regime);  // "free", "knee", "full"

// One usable loaded point (skipped, wrong-data, non-positive and other-target points are filtered out).
struct LoadedObs {
  std::size_t point_idx = 0;       // into the caller's points
  std::string block;               // the sweep block: K, B, working set, mainloop, store pattern
  int num_sms = 0;                 // K_SM
  std::uint64_t burst_bytes = 0;   // B per storing CTA
  double gap_s = 0;                // G (0: back to back)
  double offered_bps = 0;          // K B / G (+inf at G = 0)
  double load_bps = 0;             // what the path saw: offered_bps, or the issue rate of a point that could not
                                   // issue that fast (set by the fit; regimes and the free trend read it)
  bool operands_in_l2 = true;
  bool wgmma = true;               // false: the load_stream mainloop
  // Repetitions whose storers issued K x num_bursts x B bytes: every CTA reached the burst cap, its later tiles
  // ran without stores, and the reported slowdown (a median over all tiles) is a lower bound of the loaded
  // tile's (docs/interference-calibration.md, "What the saturated host points measure").
  int reps_at_cap = 0;
  bool censored() const { return reps_at_cap > 0; }
  int k_blocks_per_tile = 0;
  const std::vector<double>* slowdown_samples = nullptr;   // per repetition
  const std::vector<double>* baseline_samples = nullptr;   // T0 per repetition (launch without stores)
  const std::vector<double>* issue_rate_samples = nullptr;
  double slowdown = 0, baseline_s = 0, issue_rate_bps = 0;  // medians
};

struct InterferenceFit {
  model::InterferenceTerm term;
  std::string target;
  std::vector<LoadedObs> obs;
  std::vector<LoadRegime> regime;   // [obs], from the fitted R
  std::vector<int> free_used, full_used, rate_used;  // obs indices each estimate read
  std::uint64_t reference_burst_bytes = 0;  // the B the full-path wait was fitted at
  std::vector<std::string> notes;
  InterferenceFitOptions options;
};

bool has_loaded_points(const std::vector<PointRecord>& points);
// Throws input_error when there is no usable loaded point, or several remote targets and options.target is
// empty. A file with the local control only gives kNotIdentified (no remote path), never a fabricated term.
InterferenceFit fit_interference(const std::vector<PointRecord>& points, const InterferenceFitOptions& options = {});

// The LoadState a point's prediction is computed from: its configuration (K, B, G, working set, tile depth),
// its own baseline tile time (the launch without stores) and the term's drain rate. The rate is load_bps: the
// offered K B / G, or for a point whose SMs could not issue that fast the rate they issued at (what eq. 3's
// T_iss^0 bounds; a caller with a Burst-Gap model gives min(offered, K B / T_iss^0)).
model::LoadState load_state_of(const LoadedObs& o, const model::InterferenceTerm& term);

// The file's `extra.interference` block: model::to_json(term) plus {target, equation, fit{criteria, bootstrap,
// points[], notes}, validation{held_out (leave one block out), in_sample}}.
nlohmann::json interference_block(const std::vector<PointRecord>& points, const InterferenceFitOptions& options = {});
// Sets file.extra["interference"] when the file has loaded points (target from the file's config when it
// names one); leaves the file alone otherwise.
void attach_interference(report::ResultFile& file, const InterferenceFitOptions& options = {});

}  // namespace xs::fit
