// xstage moe judge layer: whole-kernel MegaMoE time predictions scored on measured launches (issue 28 items 3,
// 4). Per configuration and per measured schedule option (interleaved at the measured D, expert-wave at the
// measured w), the time model (time_model.hpp) predicts the host whole-kernel time two ways:
//   transfer   host = local control's measured time of the same option + (replay on host - replay local),
//              the replays from the local control's tile times; the replay on host adds the drain through R,
//              Q and the interference slowdown, so the difference is what the remote path costs;
//   ab initio  host and local = the replays from a per-shape GEMM rate (no application run feeds it).
// Beside them: the trivial transfer "host = local x the median host/local ratio of the other shapes" and the
// Burst-Gap replay without the interference term; a reference whose term is fitted on the application data
// of the other shapes (leave-one-shape-out; reference only, never scored against the bars). Nothing a judged
// (host) launch measured enters a prediction: the host medians are read only by the scorer.
#pragma once
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/model/slowdown_source.hpp"
#include "xs/moe/advisor/advisor_score_io.hpp"

namespace xs::moe {

// A per-shape GEMM rate (FLOP/s of the whole device over device_sms SMs) for each Linear.
struct GemmRate {
  std::string shape, precision;
  double l1_flops_per_s = 0, l2_flops_per_s = 0;
  int device_sms = 132;
  std::string source;  // a microbenchmark's file, or "spec sheet (--tensor-tflops)" (not measured)
};
// A gemm-rate file: {"schema": {"name": "xstage.gemm_rates"}, "rates": [{"shape", "precision",
// "l1_flops_per_s", "l2_flops_per_s", "device_sms", "source"}]}. input_error naming the field otherwise.
std::vector<GemmRate> read_gemm_rates(const nlohmann::json& doc, const std::string& file);

// The remote path as the predictions read it from the calibration (R, Q(K_SM) where identified).
struct PathInputs {
  double drain_rate_bps = 0, drain_rate_lo_bps = 0, drain_rate_hi_bps = 0;
  double capacity_bytes = 0;  // Q(K_SM) where identified; +inf where not (then the replay's point has no Q)
  // Q(K_SM)'s bracket [lo, hi] (hi may be +inf): the ci95 where identified, else PlatformModel::capacity_bracket.
  // Where Q is not identified and the replay at lo differs from the one at hi, the transfer has no point.
  double capacity_lo_bytes = 0, capacity_hi_bytes = std::numeric_limits<double>::infinity();
  bool capacity_is_point = false;
  std::string capacity_text;
};

struct WholeKernelOption {
  ScheduleOption option;
  std::optional<double> host_measured_s;   // judged launches (scorer only)
  std::optional<double> local_measured_s;  // the local control of the same configuration (an input)
  // Transfer (calibration term), its bracket over R's ci95 and the term's [lo, hi].
  std::optional<double> transfer_s, transfer_lo_s, transfer_hi_s;
  std::string transfer_why_not;
  double replay_local_s = 0;
  // The host replay with the term and its mean L2 slowdown: only where the term could be used (null in JSON
  // otherwise, never a 0 that reads like a time).
  std::optional<double> replay_host_s, mean_slowdown_l2;
  std::optional<double> transfer_no_term_s;    // Burst-Gap replay only (identity term)
  std::optional<double> transfer_constant_s;   // local x median ratio of the other shapes
  std::optional<double> transfer_reference_s;  // term fitted on the other shapes' application data
  // Ab initio.
  std::optional<double> abinitio_host_s, abinitio_local_s;
  std::optional<double> abinitio_constant_s;   // total compute-only tile time / K_SM (no schedule, no path)
  std::string abinitio_why_not;
  // Where the term was used outside its calibration (an extrapolation): the prediction is not decided (transfer_s
  // or abinitio_host_s null, the why says so) and the extrapolated time is kept here as a diagnostic only.
  std::optional<double> transfer_extrapolated_s, abinitio_host_extrapolated_s;
};

struct WholeKernelConfig {
  std::string label, shape;
  int num_sms = 0;
  std::vector<WholeKernelOption> options;
  std::vector<MeasuredPair> pairs;  // measured expert-wave / interleaved speedups
};

// The application-data reference term: s = 1 + a [offered / R - b]+, fitted per left-out shape by a grid
// search minimizing the median |error| of the transfer on the other shapes' host K_SM-66 data.
// Not identified (a, b and the error written as null, `why_not` says why) where no grid point has a finite
// median error on the other shapes: one shape alone (nothing to train on), or replays that are not finite.
struct ReferenceFit {
  std::string left_out_shape;
  bool identified = false;
  double a = 0, b = 0;
  double train_median_error = 0;
  std::string why_not;  // when !identified
};

struct WholeKernelResult {
  std::vector<WholeKernelConfig> configs;
  std::vector<ReferenceFit> reference_fits;
  std::string term_label, term_status;
  std::vector<std::string> not_scored;
};

struct WholeKernelSettings {
  model::SlowdownSource term;              // from the calibration alone
  PathInputs path;                         // R, Q from the calibration
  std::vector<GemmRate> gemm_rates;        // may be empty: ab initio uses the recorded spec-sheet F, labelled
  bool reference_fit = true;               // the leave-one-shape-out application-data fit (costly)
};

WholeKernelResult predict_whole_kernel(const ScoreInputs& inputs, const WholeKernelSettings& settings);

// The summary (schema xstage.moe_whole_kernel_score): per set (K_SM) and schedule, median / p90 |error| of each
// predictor, Spearman of predicted vs measured speedup, the bars met or missed and by how much.
nlohmann::json whole_kernel_json(const WholeKernelResult& r, const WholeKernelSettings& settings,
                                 const nlohmann::json& provenance);
std::string whole_kernel_markdown(const nlohmann::json& summary);

}  // namespace xs::moe
