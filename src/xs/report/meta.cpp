// xstage report layer: the result file's `meta` section: what built the tool, how it was run, where, and
// what each measured quantity means (meta.definitions, the one definition both backends follow).
#include <unistd.h>

#include <climits>
#include <ctime>

#include "xs/report/result_file.hpp"
#include "xs/build_info.hpp"

namespace xs::report {
using nlohmann::json;

namespace {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string host_name() {
  char buffer[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

// The one definition of every measured quantity, for both backends (GPU: backends/gpu/burst_timeline.cpp,
// simulator: sim/simulator.cpp implement exactly these). Written into every result file's meta.
json measurement_definitions() {
  return {
      {"issue_span",
       "d(b,p): producer p's issue span in burst b, from just before its first store to after every thread of "
       "the producer issued its stores. GPU: clock64 of the producer's SM divided by the launch's sm_clock_hz; "
       "simulator: simulated time from the producer's burst start to the acceptance of its last byte"},
      {"steady_state_window",
       "periodic: W = [max_p start(w,p), min_p start(N-1,p)] (w = warmup_bursts, N = num_bursts): every producer "
       "is past its warm-up and none has started its last burst. Each producer's start times are taken relative "
       "to its own start(0,p) (SM clocks are not comparable; the start barrier aligns start(0,p)). The window "
       "holds the producer-bursts (b,p), w <= b <= N-2, whose start lies in W; if none does, all b >= w"},
      {"issue_time_s",
       "T_iss: mean over producers of d(b,p). Periodic: mean over the producer-bursts of the steady-state "
       "window; isolated: mean over the K producers of d(0,p) of the one aligned burst. One sample per "
       "repetition (launch)"},
      {"issue_time_max_s",
       "the slowest producer's span. Periodic: median over bursts b >= w of max_p d(b,p); isolated: "
       "max_p d(0,p), the aggregate burst's issue time (what eq. 7 predicts as T_iss^iso). One sample per "
       "repetition"},
      {"period_s",
       "T_period (periodic only): mean over the producer-bursts of the steady-state window of "
       "start(b+1,p) - start(b,p), which is d(b,p) + G per pair; K V / T_period is the aggregate rate. "
       "Empty for isolated points"},
      {"completion_s",
       "completion mode: per burst, max over producers of the time from the producer's burst start to every "
       "thread's fence.sc.sys done (the remote-visible horizon), median over bursts b >= w. Simulator: first "
       "producer's start to the burst's last byte drained (FIFO) plus the planted completion latency"},
      {"sm_clock_hz",
       "GPU: per launch the median over producers of (clock64 delta) / (%globaltimer delta) across the launch; "
       "the point's value is the median over repetitions. 0 from the simulator"},
      {"clock_flagged",
       "GPU: a repetition whose SM clock stayed below clock_flag_fraction x the peak clock after max_reruns "
       "re-runs was kept and the point flagged; fits leave flagged points out. The simulator never flags"},
      {"stream_bytes",
       "num_bursts x V (V = K x B): the bytes one repetition (one launch) stores, (num_bursts - warmup_bursts) "
       "x V of them after warm-up. Derived from spec, not stored. Stores to host memory are partly absorbed by "
       "the L2 (60 MiB on the H200), so only streams several times the L2 show the steady drain in "
       "V / T_period; the simulator has no L2"},
      {"address_mode",
       "fresh: burst b writes the contiguous slice (b mod slots) of a ring >= max(128 MiB, 2 x L2); same: one "
       "slice, rewritten every burst; scattered: each producer's B bytes are 256-B rows, logical row (stream "
       "position mod ring rows) goes to row slot perm(row) of a ring of 2^n rows >= max(128 MiB, 2 x L2, 2 V), "
       "perm a bijection seeded by spec.scatter_seed. The simulator does not model addresses"},
      {"gap",
       "G: producer-side busy time with no stores after each burst. GPU: clock64 spin of round(G f) cycles, "
       "f = max(1 ms clock probe, SM clock of the discarded warm-up launch); simulator: exact"},
      {"repetition", "one launch (GPU) or one simulated run; each gives one sample of every quantity"},
      {"loaded",
       "suite loaded: K persistent CTAs (one per SM) run tiles_per_cta tiles of a 128 x 128 bf16 GEMM mainloop "
       "(TMA -> 4-stage shared-memory ring -> wgmma; load_stream: TMA only) while remote stores are injected in "
       "one of two modes (loaded.injection). paced (the default; open loop): storer warps on the CTAs store B "
       "bytes per burst (16-B stores, fresh slices or scattered 256-B rows), burst b of a CTA starting no earlier "
       "than b x G after its start (G = 0: back to back; offered rate K B / G), until its mainloop ends or "
       "num_bursts were issued (burst 0 always). epilogue (closed loop, an application's epilogue): no storer "
       "warps and G = 0; after every tiles_per_burst-th tile (and its C store) the CTA's 256 math threads store "
       "the next burst of B bytes (the same stores and patterns) and only then begin the next tile; num_bursts = "
       "tiles_per_cta / tiles_per_burst. One repetition = a launch without stores (baseline) then the same launch "
       "with them; in epilogue mode the baseline is the same kernel and code path with no burst (each epilogue "
       "window stores nothing, no fence). tile_time_s: median over CTAs and tiles j >= warmup_tiles of the tile's "
       "mainloop part (first stage wait to last wgmma retired; clock64 of math thread 0 / the launch's "
       "sm_clock_hz); paced slowdown: its ratio to the baseline's, per repetition. Epilogue mode adds "
       "loaded.epilogue: epilogue_time_s, median over CTAs and steady tiles with a burst of the epilogue part "
       "(thread 0's clock64 from just before its first store of the burst to after its last one issued); "
       "mean_tile_time_s and mean_tile_epilogue_time_s, the means over CTAs and steady tiles of the mainloop part "
       "and of mainloop + epilogue part (0 for a tile without a burst); baseline_mean_tile_time_s, the baseline's "
       "mean mainloop part; median_slowdown = tile_time_s / baseline_tile_time_s; and there slowdown = "
       "mean_tile_epilogue_time_s / baseline_mean_tile_time_s per repetition (the mean: what an application "
       "pays, long stalls included). bytes_issued and issue_rate_Bps = bytes_issued / mainloop_span_s (first CTA "
       "start to last mainloop end, %globaltimer; epilogue: to the end of the last tile's epilogue issue); "
       "store_span_s: max over CTAs of the first burst start (epilogue: the CTA's start) to fence.sc.sys done "
       "after the last burst (epilogue: every math thread fenced); drain_tail_s: max(0, last fence done - last "
       "mainloop end), the outstanding volume's drain time. issue_time_s / period_s: paced, the mean burst issue "
       "span and start-to-start period over bursts b >= warmup_bursts (all bursts when fewer); epilogue, the mean "
       "epilogue part and the mean start-to-start of consecutive epilogues over steady tiles. Simulator: a fluid "
       "queue (drain R, capacity Q(K); target local: unlimited, q = 0) and mainloop time per tile = base x (1 + "
       "alpha x mean outstanding / Q(K)); epilogue mode: each burst enters the queue after its tile at the "
       "per-producer issue rate (T_iss^0), issue blocks while the queue is at capacity (admitting only what "
       "drains), and the blocked issue is the epilogue part (sim/loaded.cpp)"}};
}

}  // namespace

json make_meta(const std::vector<std::string>& argv, const std::string& backend_name,
               const json& backend_description) {
  json meta = json::object();
  // The backend's facts first (devices, driver_version, cuda_version, nccl_version, clocks...), so the
  // tool's own keys below win on a name clash: those describe this binary and cannot be overridden.
  if (backend_description.is_object()) {
    meta = backend_description;
  } else if (!backend_description.is_null()) {
    meta["backend_description"] = backend_description;
  }
  if (!meta.contains("devices")) meta["devices"] = json::array();
  meta["tool_version"] = build_info::kVersion;
  meta["git_sha"] = build_info::kGitSha;
  meta["git_dirty"] = build_info::kGitDirty;
  meta["build_type"] = build_info::kBuildType;
  meta["compiler"] = build_info::kCxxCompiler;
  if (std::string(build_info::kCudaCompiler).empty()) {
    meta["cuda_compiler"] = nullptr;
  } else {
    meta["cuda_compiler"] = build_info::kCudaCompiler;
  }
  meta["argv"] = argv;
  meta["date_utc"] = utc_now_iso8601();
  meta["host"] = host_name();
  meta["backend"] = backend_name;
  meta["definitions"] = measurement_definitions();
  return meta;
}

}  // namespace xs::report
