// xstage moe host layer: the schedule advisor behind `xstage-predict moe` (paper sections 4.2 and 6.3): from
// a calibration, a shape and tile mainloop times, the per-tile model (eqs. 9-16), the fluid whole-kernel time
// of both schedules on the emulated rank, and a recommended schedule and D with its reason, as report rows.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xs/moe/model/moe_model.hpp"
#include "xs/moe/point/moe_run_point.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/moe/model/schedule_sim.hpp"
#include "xs/moe/point/moe_point.hpp"
#include "xs/moe/point/routing.hpp"
#include "xs/moe/point/shapes.hpp"

namespace xs::moe {

struct AdvisorConfig {
  MoeShape shape;                   // h, I, E, top-k (name may be empty when given by dimensions)
  std::string precision = "bf16";   // bf16 | fp8 (the Combine is bf16 in both)
  int tokens_per_rank = 6976;       // T
  int num_ranks = 8;                // P
  int num_sms = 66;                 // K_SM
  int device_sms = 132;             // SMs a given device throughput F is spread over
  int block_n = 128;                // b_n: 128 | 256 (b_m = 128)
  std::string routing = "skewed";   // balanced | skewed
  double zipf_alpha = 0.5, gain = 1.0;
  std::uint64_t routing_seed = 1;
  std::string target = "host";      // the target the user means to run on
};

// M_X at (K_SM, K_SM V_t): the CLI resolves it from --model or --R/--tiss0/--Q.
struct AdvisorPlatform {
  double drain_rate_bps = 0;             // R
  double tiss0_s = 0;                    // T_iss^0(K_SM, K_SM V_t)
  bool tiss0_extrapolated = false;
  std::optional<double> capacity_bytes;  // Q(K_SM), or its lower bound
  bool capacity_is_lower_bound = false, capacity_extrapolated = false;
  std::string capacity_unavailable;      // why Q is absent (the calibration did not identify it)
  std::string calibration_target;        // the calibration's target; empty when not known (flags)
};

// Tile mainloop times: from a device throughput F (T_L = 2 b_m b_n k / (F / device_sms)) or measured.
struct AdvisorThroughput {
  std::optional<double> tensor_flops_per_s;  // F; exactly one of this and run
  std::optional<RunPoint> run;               // T_L1, T_L2 = the expert_wave variant's mainloop medians
};

// The per-tile model with the mainloop times given directly (predict_megamoe's formulas; its F-derived
// mainloops replaced by these). Same input checks; F is not needed.
MoePrediction predict_with_mainloops(MoeModelInputs in, double l1_mainloop_s, double l2_mainloop_s);

enum class RowKind { kSeconds, kBytes, kRate, kNumber, kInteger, kFlag, kText };
struct AdvisorRow {
  std::string key;
  RowKind kind = RowKind::kNumber;
  double value = 0;  // kSeconds .. kInteger
  bool flag = false;
  std::string text;
  std::string note;  // meaning, formula, equation
};

struct Advice {
  MoePrediction tile;
  int lead_rows = 1;            // D: knee_lead_rows unless the schedule replay finds it >2% slower than its best
  int knee_lead_rows = 1;       // max(1, ceil(D_knee)), eq. 16 alone
  LeadChoice replay_leads;      // the interleaved replay at every candidate D
  double replay_wave_s = 0;     // the expert-wave replay (ExpertWave{1}) with the same tile durations
  double replay_interleaved_knee_s = 0;  // the interleaved replay at knee_lead_rows
  FluidEstimate fluid_no_limit; // Q = infinity: the wave schedule's fastest fluid time
  std::optional<FluidEstimate> fluid_at_capacity;  // Q identified: the wave schedule at Q
  FluidEstimate fluid_worst;    // Q unknown: at Q = 0 or at Q's lower bound (the slowest the model allows)
  std::string schedule;         // interleaved | either | expert_wave
  std::string reason;
  std::vector<AdvisorRow> rows;  // the report, in order (docs/predict-moe.md lists the keys)
};

// The configuration a megamoe point describes: its shape, precision, T, P, K_SM, b_n, routing (zipf_alpha 0 for a
// balanced routing, as routing_params_of(MoePointSpec) has it), gain, seed and target; device_sms at its default. The
// sweep advises a point's spec through it and the score reads a file's points (their axes, moe_point_json.hpp) so.
AdvisorConfig advisor_config_of(const MoePointSpec& spec);

// The routing a configuration describes (the advisor builds its problem from it; so does a caller that
// passes a built problem to the overload below).
RoutingParams routing_params_of(const AdvisorConfig& config);

// Builds the routing and the emulated rank's problem (CPU), evaluates both schedules and recommends one.
// input_error naming the field for a bad configuration (b_n not 128/256, tiles not dividing h or 2I,
// E not a multiple of P, precision not bf16/fp8, no or two throughput sources).
Advice advise(const AdvisorConfig& config, const AdvisorPlatform& platform, const AdvisorThroughput& throughput);
// The same with the emulated rank's problem already built from this configuration's routing (the bench
// builds it once for the advisor and the runner; routing a large T takes about a second).
Advice advise(const AdvisorConfig& config, const AdvisorPlatform& platform, const AdvisorThroughput& throughput,
              const MoeProblem& problem);

}  // namespace xs::moe
