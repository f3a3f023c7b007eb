// xstage report layer: the measurement records every backend (GPU, simulator) produces and every consumer
// (fitter, result files, gate) reads. Plain data, SI units, no CUDA.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xs/common/stats.hpp"

namespace xs {

// The microbenchmark suites of the paper's section 3 (stable dotted ids: remote_store.<suite>.<target>).
enum class Suite {
  kPeriodic,      // N bursts of V = K*B, each followed by a producer-side gap G (Fig. 3a/b/d)
  kIsolated,      // one burst after a verified recovery (Fig. 3c, the capacity knee)
  kLocalControl,  // same producers/stores/loop, to local HBM: separates instruction cost from backpressure
  kLoaded,        // a GEMM-like mainloop on K CTAs while storer warps on them issue paced bursts (issue 28)
};
const char* suite_name(Suite suite);            // "periodic", "isolated", "local_control"
Suite parse_suite(const std::string& name);     // throws input_error naming accepted names

enum class ProducerKind { kCta, kWarp };        // one producer per CTA (default) or per warp
// fresh: a new contiguous slice of a ring > L2 each burst; same: the same lines every burst; scattered:
// 256-B rows at a seeded permutation of the row slots of a ring > L2 (the MegaMoE scatter pattern).
enum class AddressMode { kFresh, kSame, kScattered };
const char* producer_kind_name(ProducerKind kind);
const char* address_mode_name(AddressMode mode);
ProducerKind parse_producer_kind(const std::string& name);
AddressMode parse_address_mode(const std::string& name);

// The loaded suite's mainloop: TMA -> shared-memory ring -> wgmma (a bf16 GEMM tile), or TMA loads alone.
enum class Mainloop { kWgmma, kLoadStream };
// Where the mainloop's operands live: a few blocks that stay in L2, or a working set >= 4 x L2 streamed from HBM.
enum class WorkingSet { kL2, kHbm };
// How the loaded suite injects its stores. paced: separate storer warps issue bursts of B every G, open loop
// (the clock sets the rate). epilogue: no storer warps; after every tiles_per_burst-th tile the CTA's math
// warps store B bytes themselves and only then begin the next tile, closed loop (the applications' epilogue).
enum class Injection { kPaced, kEpilogue };
const char* injection_name(Injection injection);
Injection parse_injection(const std::string& name);  // throws input_error naming "paced", "epilogue"
const char* mainloop_name(Mainloop mainloop);
const char* working_set_name(WorkingSet working_set);
Mainloop parse_mainloop(const std::string& name);
WorkingSet parse_working_set(const std::string& name);

// The loaded suite's own knobs (ignored by the other suites, written only for it). There, K is K_SM (one
// persistent CTA per SM), B the bytes each CTA stores per burst, G the per-CTA burst period (start to start,
// paced by %globaltimer; 0: back to back), so the offered rate is K*B/G; num_bursts caps the bursts per CTA
// and launch (the storers stop when their CTA's mainloop ends), threads_per_producer is the storer threads.
// Injection epilogue: G must be 0, B is the volume V each CTA stores after every tiles_per_burst-th tile,
// the storers are the 256 math threads (threads_per_producer 256), num_bursts = tiles_per_cta /
// tiles_per_burst and warmup_bursts = warmup_tiles / tiles_per_burst (the sweep derives both;
// epilogue_bursts below).
struct LoadedKnobs {
  Injection injection = Injection::kPaced;
  int tiles_per_burst = 1;      // epilogue only: a burst after tiles j with (j + 1) % tiles_per_burst == 0
  Mainloop mainloop = Mainloop::kWgmma;
  WorkingSet working_set = WorkingSet::kL2;
  int tiles_per_cta = 256;      // 128 x 128 output tiles per CTA and launch
  int warmup_tiles = 16;        // leading tiles per CTA left out of the per-tile statistics
  int k_elems = 512;            // GEMM K per tile (multiple of 64): 8 k-blocks of 32 KiB loads
};

// Epilogue mode: the bursts per CTA and launch (tiles_per_cta / tiles_per_burst) and those inside the
// warm-up tiles (warmup_tiles / tiles_per_burst).
inline int epilogue_bursts(const LoadedKnobs& k) { return k.tiles_per_cta / k.tiles_per_burst; }
inline int epilogue_warmup_bursts(const LoadedKnobs& k) { return k.warmup_tiles / k.tiles_per_burst; }

inline constexpr std::uint32_t kDefaultScatterSeed = 1;
inline constexpr std::uint64_t kScatterRowBytes = 256;  // scattered mode: B must be a multiple of this

// One point of a sweep: everything needed to run it again.
struct PointSpec {
  Suite suite = Suite::kPeriodic;
  std::string target = "host";             // "local", "host", "peer:N", "nccl:N", "sim"
  int num_producers = 1;                   // K
  std::uint64_t bytes_per_producer = 0;    // B (multiple of store_width_bytes, >= 16)
  double gap_s = 0;                        // G, producer-side busy time with no remote stores
  int num_bursts = 32;                     // bursts per repetition (periodic); isolated uses 1
  int warmup_bursts = 8;                   // leading bursts excluded from steady-state statistics
  int repetitions = 5;                     // independent launches; each gives one sample
  int store_width_bytes = 16;              // 4, 8 or 16
  int threads_per_producer = 256;
  ProducerKind producer_kind = ProducerKind::kCta;
  AddressMode address_mode = AddressMode::kFresh;
  std::uint32_t scatter_seed = kDefaultScatterSeed;  // row permutation seed (address_mode scattered only)
  bool completion = false;                 // also measure remote-visible completion (fence/flag)
  LoadedKnobs loaded;                      // suite loaded only

  std::uint64_t volume_bytes() const {     // V = K * B
    return static_cast<std::uint64_t>(num_producers) * bytes_per_producer;
  }
};

// Data verification of one point: every byte the kernel claims to have written is read back.
struct Verification {
  bool checked = false;
  std::uint64_t bytes_checked = 0;
  std::uint64_t wrong = 0;                 // mismatching 4-byte words; > 0 fails the point
};

// The model's prediction stored beside the measurement (filled after the fit, or from --model).
struct Prediction {
  double issue_time_s = 0;                 // T_iss (eq. 3) or T_iss^iso (eq. 7)
  double period_s = 0;                     // T_period = max(T_iss^0 + G, V/R) (eq. 2)
  double drain_horizon_s = 0;              // V / R
};

// What the loaded suite measures (one sample per repetition; a repetition is a baseline launch without
// stores followed by the same launch with them). Definitions in meta.definitions (src/xs/report/meta.cpp).
struct LoadedMeasurement {
  Summary tile_time_s;            // mainloop time per tile under the stores: median over CTAs and steady tiles
  Summary baseline_tile_time_s;   // the same without stores (rate 0), launched just before
  // paced: tile_time / baseline_tile_time; epilogue: mean_tile_epilogue_time / baseline_mean_tile_time. Per
  // repetition.
  Summary slowdown;
  Summary bytes_issued;           // stored bytes of the launch, all CTAs
  Summary issue_rate_bps;         // bytes_issued / mainloop span
  Summary mainloop_span_s;        // first CTA start -> last CTA's mainloop end (%globaltimer)
  Summary store_span_s;           // max over CTAs: first burst start -> fence.sc.sys after its last burst
  Summary drain_tail_s;           // last store performed - last mainloop end (0 if before): what was outstanding
  double baseline_sm_clock_hz = 0;
  // Injection epilogue only (absent in paced points and in files written before the mode existed).
  struct Epilogue {
    Summary epilogue_time_s;            // store issue per tile with a burst: median over CTAs and steady tiles
    Summary mean_tile_time_s;           // mainloop part per tile: mean over CTAs and steady tiles
    Summary mean_tile_epilogue_time_s;  // mainloop + epilogue part per tile: mean (what the application pays)
    Summary baseline_mean_tile_time_s;  // mainloop part per tile of the baseline (no stores): mean
    Summary median_slowdown;            // tile_time / baseline_tile_time (the paced mode's slowdown)
  };
  std::optional<Epilogue> epilogue;
};

// One finished point. Each sample is one repetition: the median over its steady-state bursts.
struct PointRecord {
  std::string id;                          // e.g. "remote_store.periodic.host"
  PointSpec spec;
  bool skipped = false;
  std::string skip_reason;
  // Definitions: meta.definitions of every result file (written by make_meta, src/xs/report/meta.cpp).
  Summary issue_time_s;                    // T_iss: mean over producers of the producer's issue span
  std::optional<Summary> issue_time_max_s; // the slowest producer's issue span (both suites, both backends)
  Summary period_s;                        // burst start-to-start period T_period (periodic only)
  std::optional<Summary> completion_s;     // issue start -> remote-visible (completion mode)
  double sm_clock_hz = 0;                  // derived from clock64 vs %globaltimer (0 if unknown)
  bool clock_flagged = false;              // taken under a clock drop (re-run or kept flagged)
  Verification verification;
  std::optional<Prediction> prediction;
  std::optional<LoadedMeasurement> loaded;  // suite loaded only
};

}  // namespace xs

namespace xs {
// Canonical identity of a point's spec (compact JSON of the spec): used by --resume to skip points the
// journal already holds.
std::string point_key(const PointSpec& spec);
// Stable dotted id: "remote_store.<suite>.<target>" (target "peer:1" becomes "peer1").
std::string point_id(const PointSpec& spec);
}  // namespace xs
