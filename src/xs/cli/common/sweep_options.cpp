// xstage cli layer: the CLI11 flags of the options xstage-calibrate and xstage-bench share (see sweep_options.hpp);
// the option structs and what reads them live in the remote_store slice.
#include "xs/cli/common/sweep_options.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "xs/bench/sweep.hpp"
#include "xs/cli/common/cli_main.hpp"

namespace xs::cli {

void add_backend_options(CLI::App& app, remote_store::BackendOptions& o) {
  app.add_option("--backend", o.kind, "Measurement backend: gpu (CUDA device) or sim (discrete-event simulator)")
      ->check(one_of({"gpu", "sim"}))->capture_default_str();
  app.add_option("--target", o.target, "Remote-store destination: local (HBM), host (mapped pinned host memory "
                 "over PCIe), peer:N (GPU N), nccl:N (NCCL symmetric window); default host");
  app.add_option("--device", o.device_index, "CUDA device that issues the stores")->capture_default_str();
  app.add_option("--sim-R", o.sim_R, "sim: planted drain rate R, with its unit (e.g. 717GB/s)")->capture_default_str();
  app.add_option("--sim-tiss0", o.sim_tiss0, "sim: planted T_iss^0 of a 32 KiB-per-producer burst")->capture_default_str();
  app.add_option("--sim-Q", o.sim_Q, "sim: planted outstanding capacity Q")->capture_default_str();
  app.add_option("--sim-latency", o.sim_latency, "sim: completion latency after drain")->capture_default_str();
  app.add_option("--sim-noise", o.sim_noise, "sim: relative jitter (lognormal sigma)")->capture_default_str()
      ->check(number_in(0.0, 1.0));
  app.add_option("--sim-alpha", o.sim_alpha, "sim: planted interference term: a mainloop tile takes base x (1 + "
                 "alpha x outstanding / Q) (suite loaded; 0: no term)")->capture_default_str()->check(number_in(0.0, 100.0));
  app.add_option("--sim-tile-time", o.sim_tile_time, "sim: planted mainloop time per tile without stores (suite loaded)")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "sim: random seed (an integer >= 0)")->capture_default_str()
      ->transform(CLI::Validator(  // CLI11 would store -1 as 2^64 - 1; its own range check prints 309 digits
          [](std::string& text) -> std::string {
            const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
            // Decimal always: CLI11 would read a leading 0 as octal (010 -> 8).
            if (digits) text.erase(0, std::min(text.find_first_not_of('0'), text.size() - 1));
            if (digits && (text.size() < 20 || (text.size() == 20 && text <= "18446744073709551615"))) return "";
            return "'" + text + "' is not a seed: give an integer from 0 to 18446744073709551615";
          },
          "UINT64"));
}

void add_sweep_overrides(CLI::App& app, remote_store::SweepOverrides& o, bool with_suite) {
  if (with_suite)
    app.add_option("--suite", o.suite, "Run one suite: periodic, isolated or local_control (with --K/--B/--G)");
  const std::string narrows = with_suite ? "; without --suite, keeps only these values of the sweep's blocks" : "";
  app.add_option("--K", o.K, "Producer counts, e.g. 1,8,33,132 or 8:128:x2" + narrows);
  app.add_option("--B", o.B, "Bytes per producer per burst, e.g. 1KiB:512KiB:x2 (multiples of the store width)" +
                 narrows);
  app.add_option("--G", o.G, std::string("Producer-side gaps, e.g. 0:20us:+1us (periodic suites)") +
                 (with_suite ? "; needs --suite" : ""));
  app.add_option("--reps", o.repetitions, "Repetitions (launches) per point, <= 100,000; each gives one sample");
  app.add_option("--bursts", o.num_bursts, fmt::format("Bursts per repetition (periodic), <= {}", bench::kMaxBursts));
  app.add_option("--warmup", o.warmup_bursts, "Leading bursts left out of the steady-state statistics");
  app.add_option("--store-width", o.store_width_bytes, "Store width in bytes: 4, 8 or 16");
  app.add_option("--threads", o.threads_per_producer, "Threads per producer (CTA producers)");
  app.add_option("--producer", o.producer, "Producer granularity: cta (one per SM) or warp")
      ->check(one_of({"cta", "warp"}));
  app.add_option("--address-mode", o.address_mode, "fresh: a new slice of a ring larger than L2 each burst; "
                 "same: the same lines every burst; scattered: 256-B rows at a seeded permutation of the row "
                 "slots of a ring larger than L2 (B a multiple of 256; seed: config key scatter_seed)")
      ->check(one_of({"fresh", "same", "scattered"}));
  app.add_flag("--completion", o.completion, "Also measure the remote-visible (system fence) horizon per burst");
  app.add_option("--min-stream", o.min_stream, "Raise num_bursts of small periodic points so that each repetition "
                 "streams at least this much after warm-up (e.g. 64MiB; 0 keeps --bursts/--warmup exactly; "
                 "default: the config's min_stream_bytes)");
}

void add_table_flags(CLI::App& app, remote_store::TableOutputs& o, const std::string& what) {
  app.add_option("--csv", o.csv_path, "Also write " + what + " as CSV to this file, or - for stdout (median, "
                 "p10, p90, prediction, relative error, clock flag, verification)")
      ->type_name("FILE")
      ->check(kNonEmptyPath);
  app.add_flag("--md", o.markdown, "Print " + what + " as a Markdown table on stdout");
}

}  // namespace xs::cli
