// xstage cli layer: xstage-fa-point, a diagnostic driver of run_fa_a2a_point: runs one or more
// (M, target) points and prints every timing, TFLOPS, sigma, store spans and the verification detail,
// without writing a result file (xstage-bench fa_a2a is the benchmark). Exit codes as every xstage tool.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "xs/attention/run/fa_runner.hpp"
#include "xs/cli/common/cli_main.hpp"

namespace {

struct Options {
  std::vector<int> seq_lens{8192};
  int num_heads = 8;
  int head_dim = 128;
  int num_ranks = 8;
  std::vector<std::string> targets{"local"};
  int repetitions = 10;
  int launches_per_graph = 5;
  int num_ctas = 0;
  xs::attention::FaKnobs knobs;  // --fa-*
  int device = 0;
  bool no_verify = false;
};

void print(const xs::attention::FaA2aPointSpec& s, const xs::attention::FaA2aPointResult& r) {
  std::printf("fa_a2a M=%d H=%d d=%d P=%d target=%s device=%d schedule=%s tiles=%s: %s%s%s\n", s.seq_len, s.num_heads,
              s.head_dim, s.num_ranks, s.target.c_str(), s.device, s.knobs.schedule.c_str(),
              s.knobs.tile_scheduler.c_str(), r.status.c_str(), r.reason.empty() ? "" : " - ", r.reason.c_str());
  if (r.status == "skipped") return;
  const auto us = [](const xs::Summary& t) { return t.median * 1e6; };
  std::printf("  T_FA %.1f us (%.1f TFLOPS)  T_A2A %.1f us (bulk %.1f)  T_serial %.1f  T_fused %.1f  T_cc %.1f us\n",
              us(r.t_fa), r.fa_tflops, us(r.t_a2a), us(r.t_a2a_bulk), us(r.t_serial), us(r.t_fused), us(r.t_cc));
  std::printf("  remote-visible: E_res = T_fused - T_FA = %.1f us, cc - FA = %.1f us, K = %d CTAs, %d tiles, "
              "V_total %.1f MiB\n",
              us(r.t_fused) - us(r.t_fa), us(r.t_cc) - us(r.t_fa), r.num_ctas, r.num_tiles,
              r.volume_bytes / (1024.0 * 1024.0));
  std::printf("  SM clock %.0f MHz, sigma %.3f us/KV tile, Q-loop %.1f us, T_RS fused %.2f us (p90 %.2f), cc %.2f us, "
              "fence %.2f us\n",
              r.sm_clock_hz * 1e-6, r.sigma_s_per_kv_tile * 1e6, r.qloop_fused.median * 1e6,
              r.store_span_fused.median * 1e6, r.store_span_fused.p90 * 1e6, r.store_span_cc.median * 1e6,
              r.fence_span_cc.median * 1e6);
  std::printf("  sender-side: T_FA %.1f  T_serial %.1f  T_fused %.1f  T_cc %.1f us; E_res %.1f us, cc - FA %.1f us "
              "(paired medians)\n",
              us(r.sender_fa), us(r.sender_serial), us(r.sender_fused), us(r.sender_cc), us(r.e_res_sender_paired),
              us(r.e_cc_sender_paired));
  std::printf("  bursts: phase spread %.2f us (median over waves), concurrent storers peak %.0f, mean %.1f; "
              "FA-only layout %s, heads-major FA-only %.1f us\n",
              r.store_phase_spread_median_s * 1e6, r.peak_concurrent_storers, r.mean_concurrent_storers,
              r.fa_only_layout.c_str(), us(r.t_fa_heads_major));
  std::printf("  destinations: %s; %.1f MiB per launch through the target\n", r.destinations.c_str(),
              r.remote_bytes / (1024.0 * 1024.0));
  std::printf("  verify: rel error %.3g, max abs %.3g, unwritten %llu, wrong serial/fused/cc %llu/%llu/%llu -> %s (seed %llu)\n",
              r.rel_error, r.max_abs_error, static_cast<unsigned long long>(r.unwritten_local),
              static_cast<unsigned long long>(r.wrong_serial), static_cast<unsigned long long>(r.wrong_fused),
              static_cast<unsigned long long>(r.wrong_cc), r.verified ? "ok" : "FAILED",
              static_cast<unsigned long long>(r.seed));
  if (!r.verified && !r.error_detail.empty()) std::printf("  detail: %s\n", r.error_detail.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  return xs::cli::run_main("xstage-fa-point", [&]() -> int {
    Options o;
    CLI::App app{
        "xstage-fa-point: diagnose single FlashAttention + Ulysses All-to-All points on this GPU (FA-only, A2A,\n"
        "serial, fused, completion-coupled) and print every timing, sigma, store span and the verification\n"
        "detail. It writes no result file: for the benchmark with a result file, --model predictions, --resume\n"
        "and tables, use `xstage-bench fa_a2a` (same kernels). Needs a GPU (no simulator).\n\n"
        "Examples:\n"
        "  xstage-fa-point --M 8192 --target local\n"
        "  xstage-fa-point --M 8192,32768 --heads 8 --P 8 --target local,host\n\n"
        "Exit codes: 0 ok, 1 a point failed verification, 2 bad usage or input, 3 CUDA failure, 77 no GPU.",
        "xstage-fa-point"};
    xs::cli::add_version_flag(app, "xstage-fa-point");
    app.add_option("--M", o.seq_lens, "Sequence lengths, comma-separated (multiples of 128)")
        ->delimiter(',')->check(xs::cli::integer_in(128, 1 << 20))->capture_default_str();
    app.add_option("--heads", o.num_heads, "Heads this rank computes")->check(xs::cli::integer_in(1, 1024))->capture_default_str();
    app.add_option("--head-dim", o.head_dim, "Head dim d (built: 64, 128)")->capture_default_str();
    app.add_option("--P", o.num_ranks, "Ulysses ranks the output is split over")
        ->check(xs::cli::integer_in(1, 1024))->capture_default_str();
    app.add_option("--target", o.targets, "Destinations, comma-separated: local, host, peer:N")
        ->delimiter(',')->capture_default_str();
    app.add_option("--repetitions", o.repetitions, "Timed graph replays")->check(xs::cli::integer_in(1, 100000))
        ->capture_default_str();
    app.add_option("--launches-per-graph", o.launches_per_graph, "Back-to-back launches per replay")
        ->check(xs::cli::integer_in(1, 100))->capture_default_str();
    app.add_option("--ctas", o.num_ctas, "Persistent CTAs (0: one per SM)")->check(xs::cli::integer_in(0, 1 << 16))
        ->capture_default_str();
    app.add_option("--fa-schedule", o.knobs.schedule,
                   "FlashAttention consumer schedule: baseline, pingpong, pingpong_full")
        ->capture_default_str();
    app.add_option("--fa-tile-scheduler", o.knobs.tile_scheduler, "Which CTA computes which tile: dynamic or static")
        ->capture_default_str();
    app.add_option("--fa-store-cache", o.knobs.store_cache, "Output stores' cache operator: default or streaming")
        ->capture_default_str();
    app.add_option("--fa-heads-per-band", o.knobs.heads_per_band,
                   "Tile order: heads per band, 1 = m-block fastest (default), 0 = auto (the L2 size), else a divisor of heads")
        ->capture_default_str();
    app.add_option("--fa-tail-splits", o.knobs.tail_splits,
                   "Split tail: the last round of tiles in this many KV pieces (1 = off, up to 8)")
        ->capture_default_str();
    app.add_option("--fa-kv-cluster", o.knobs.kv_cluster, "CTAs per cluster sharing K/V by TMA multicast: 1 or 2")
        ->capture_default_str();
    app.add_option("--device", o.device, "CUDA device that computes and sends (peer:N: its rank)")->capture_default_str();
    app.add_flag("--no-verify", o.no_verify, "Skip the reference comparison (not recommended)");
    xs::cli::parse_or_throw(app, argc, argv);
    bool all_ok = true;
    for (const std::string& target : o.targets) {
      for (int m : o.seq_lens) {
        xs::attention::FaA2aPointSpec s;
        s.seq_len = m;
        s.num_heads = o.num_heads;
        s.head_dim = o.head_dim;
        s.num_ranks = o.num_ranks;
        s.target = target;
        s.repetitions = o.repetitions;
        s.launches_per_graph = o.launches_per_graph;
        s.num_ctas = o.num_ctas;
        s.knobs = o.knobs;
        s.device = o.device;
        s.verify = !o.no_verify;
        const auto r = xs::attention::run_fa_a2a_point(s);
        print(s, r);
        std::fflush(stdout);
        all_ok = all_ok && r.status != "failed";
      }
    }
    return all_ok ? 0 : 1;
  });
}
