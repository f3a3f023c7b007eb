// xstage bench layer: sweep specifications. A sweep is a list of blocks, each a cartesian product of
// K x B x G ranges (the range grammar of common/range.hpp) for one suite, on top of shared defaults.
// The same structure comes from a config file (configs/calibrate/*.json) or from CLI ranges.
//
// Config file form (strict: unknown keys are errors):
//   { "target": "host",
//     "defaults": { "num_bursts": 32, "warmup_bursts": 8, "repetitions": 5, "store_width_bytes": 16,
//                   "threads_per_producer": 256, "producer": "cta", "address_mode": "fresh",
//                   "completion": false, "min_stream_bytes": "64MiB", "scatter_seed": 1 },
//     "blocks": [ { "name": "zero_gap", "suite": "periodic", "K": "1,8,33,132", "B": "4KiB:256KiB:x2",
//                   "G": "0" }, ... ] }
// Any default may be overridden inside a block. min_stream_bytes (optional) raises num_bursts of small
// periodic points so that each repetition streams at least that much after warm-up (steady state).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/report/records.hpp"

namespace xs::bench {

struct SweepBlock {
  std::string name;           // "zero_gap", "gap_sweep", "isolated", "local_control", ...
  Suite suite = Suite::kPeriodic;
  std::string K = "1";        // range grammar, integers
  std::string B = "32KiB";    // range grammar, sizes
  std::string G = "0";        // range grammar, times
  nlohmann::json overrides = nlohmann::json::object();  // per-block defaults
};

// Limits checked before anything is allocated or measured (docs/exit-codes.md): a sweep beyond them is
// bad input (exit 2), not an out-of-memory crash or a run that ignores Ctrl-C for hours.
// Every backend checks a point against these same values (bench::validate_spec; the simulator and the GPU
// plan use them too), so the documented caps are the enforced ones.
inline constexpr std::uint64_t kMaxSweepPoints = 100'000;  // whole expanded sweep, all blocks together
inline constexpr int kMaxRepetitions = 100'000;            // per point
inline constexpr int kMaxBursts = 65'536;                  // bursts per repetition (num_bursts)
inline constexpr int kMaxProducers = 65'536;               // K per point (a GPU holds far fewer co-resident)
// K x num_bursts per repetition: the GPU keeps one 32-byte clock record per producer and burst (128 MiB at
// this cap), the simulator a few doubles (under 200 MiB with noise on), so memory is bounded before allocating.
inline constexpr std::uint64_t kMaxProducerBursts = 4ull << 20;
// V = K x B per point: 1 TiB is past any GPU's or host's memory, and keeps K x B (and every offset a kernel forms
// from it) far from wrapping a 64-bit integer.
inline constexpr std::uint64_t kMaxBurstBytes = 1ull << 40;
// G per point: the paper's gaps are microseconds; a gap of seconds per burst is a run of hours.
inline constexpr double kMaxGapS = 1.0;

struct SweepConfig {
  std::string target = "host";
  nlohmann::json defaults = nlohmann::json::object();
  std::vector<SweepBlock> blocks;
};

// Parses and validates a config object; throws input_error naming the JSON path.
SweepConfig sweep_config_from_json(const nlohmann::json& j);
nlohmann::json to_json(const SweepConfig& config);
SweepConfig load_sweep_config(const std::string& path);

// The built-in default calibration for a target: zero-gap periodic points over K/B decompositions
// (R), a gap sweep at a few (K,B) (T_iss^0 plateau + validation), isolated bursts over V (Q knee),
// the local-memory control of the gap sweep, the loaded suite's blocks (append_loaded_blocks), and zero-gap points at K=132, B=16 KiB with streams of 0.5 .. 8 x
// a 60 MiB L2 (R's convergence with stream length). Gap ranges span 0 .. 3 V/R_guess so that both branches of
// eq. 3 are sampled whatever the path's rate; R_guess is only for sizing (e.g. the copy-engine bandwidth
// of the same path), never used by the fit. Sized so that one H200 finishes in well under 60 s.
SweepConfig default_calibration(const std::string& target, double drain_rate_guess_bps);

// Expands every block into points (block order, then K, B, G). Each point is validated (B > 0 and a
// multiple of the store width, K >= 1, store width 4/8/16, num_bursts > warmup_bursts, the caps above).
// requested_* hold num_bursts/warmup_bursts before min_stream_bytes raised them, so a tool can say what it
// changed (describe_adjustments).
struct ExpandedPoint {
  std::string block;
  PointSpec spec;
  int requested_num_bursts = 0, requested_warmup_bursts = 0;
};
std::vector<ExpandedPoint> expand(const SweepConfig& config);

// One line per block whose points were changed by the sweep's own rules (min_stream_bytes raising
// num_bursts/warmup_bursts), with the values and the reason; empty when nothing was changed.
std::vector<std::string> describe_adjustments(const SweepConfig& config, const std::vector<ExpandedPoint>& points);

// Spec-level checks shared by every backend (the caps above, the target's form: local, host, sim, peer:N or
// nccl:N); throws input_error naming the field.
void validate_spec(const PointSpec& spec);
// The loaded suite's own checks (part of validate_spec): 16-B stores, CTA storers of at most
// kMaxLoadedStorerThreads threads, no completion mode, k_elems and tile counts; injection epilogue: G = 0,
// threads_per_producer = kLoadedMathThreads, tiles_per_burst in [1, tiles_per_cta], num_bursts and
// warmup_bursts as epilogue_bursts / epilogue_warmup_bursts (records.hpp; expand derives them).
inline constexpr int kMaxLoadedStorerThreads = 224;
inline constexpr int kLoadedMathThreads = 256;  // injection epilogue: the two math warpgroups store
void validate_loaded(const PointSpec& spec);

// The loaded suite's blocks of the default calibration (names loaded_*; --only loaded selects them all):
// K_SM 132/66/33 (L2-resident operands), K_SM 132 with HBM-streamed operands, scattered rows, and the pure
// load stream, each over offered rates 0.25, 0.5, 1, 2 x R_guess and back to back (G = 0), all with B = 8 KiB
// per CTA and burst; and B = 2 KiB and 64 KiB at 0.5 and 2 x R_guess. Every point also measures rate 0.
void append_loaded_blocks(SweepConfig& config, double drain_rate_guess_bps);
// Part of append_loaded_blocks: injection epilogue (the math warps store B = V bytes after every tile, G = 0),
// wgmma, L2 working set, fresh slices, K_SM 132/66/33 x B 2, 8 KiB (256 tiles per CTA) and 32, 128 KiB (64
// tiles); scattered rows at K_SM 132 over the same B; HBM working set at K_SM 132, B 8 and 32 KiB (64 tiles).
// Names loaded_epilogue_*; configs/calibrate/loaded-epilogue.json holds the same blocks.
void append_loaded_epilogue_blocks(SweepConfig& config);
// The knobs of an epilogue block (injection, tiles_per_burst 1, wgmma, 256 math-thread storers, warm-up 1/16 of
// the tiles).
nlohmann::json loaded_epilogue_overrides(const char* working_set, const char* address_mode, int tiles_per_cta);
// What a loaded block sets beside its knobs: num_bursts 4096 (a cap: the storers stop with the mainloop),
// warmup_bursts 2, 128 storer threads, min_stream_bytes 0.
nlohmann::json loaded_block_overrides();

}  // namespace xs::bench
