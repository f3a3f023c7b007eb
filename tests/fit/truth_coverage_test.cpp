// xstage fit tests: interval coverage on the independent truth generator (truth_generator.hpp), in scenarios
// that break the model the way the H200 does (issue 27 item 5): between-run per-point offsets of 5-10%, an
// absorbing prefix on isolated bursts, slow drift in R, a soft knee, a gap sweep that stops short, and a
// host-like path. For each scenario, num_seeds datasets are fitted and we count how often each reported 95%
// interval contains the planted R, Q(K) and T_iss^0(K,B).
//
// The bar (nominal 95%): every estimate the fitter reports as constrained must be covered in >= 90% of
// datasets; an estimate it cannot support must come back unconstrained ("not identified", a bound), which
// owes no interval. Per scenario the test also says which parameters must stay identified (most datasets
// constrained) where the model does: a fitter that gives up everywhere would otherwise pass.
//
// CTest runs every scenario on kCiSeeds seeds (CI has 2 cores), the tables' 200. They come from
//   XS_COVERAGE_SEEDS=200 XS_COVERAGE_DIR=results/cpu/coverage build/bin/xs_fit_tests --gtest_filter='TruthCoverage.*'
// which writes one JSON table per scenario (results/cpu/README.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/common/stats.hpp"
#include "xs/fit/fit.hpp"
#include "truth_generator.hpp"

namespace xs::fit {
namespace {

using namespace xs::fit::truth;
using nlohmann::json;

// The committed tables' own seeds, so CTest asserts the numbers results/cpu/coverage/ shows (about 8 s). 40
// left binomial noise of +-5% on R and bars flipped on seed luck; 100 still did (one_repetition's R: 0.89 on
// seeds 1-100, 0.935 on 1-200, 0.953 on 1-400).
constexpr int kCiSeeds = 200;
constexpr int kResamples = 200;        // fewer than the default 1000 to keep the study to seconds
constexpr double kNominal = 0.95;
constexpr double kCoverageBar = 0.90;  // issue 27: at least 90% where the model stays identifiable
constexpr double kDrainTol = 0.03, kCapacityTol = 0.15, kTiss0Tol = 0.10;

int num_seeds() {
  const char* env = std::getenv("XS_COVERAGE_SEEDS");
  const int n = env ? std::atoi(env) : 0;
  return n > 0 ? n : kCiSeeds;
}

// One parameter kind over all datasets of a scenario.
struct Tally {
  int n = 0;              // estimates reported as constrained (the ones an interval is owed for)
  int covered = 0;        // [ci95_lo, ci95_hi] contains the truth
  int null_interval = 0;  // NaN interval ("no interval")
  int zero_width = 0;     // ci95_lo == ci95_hi (never acceptable)
  int unconstrained = 0;  // reported constrained = false (not in n)
  int within_bar = 0;     // |value / truth - 1| within the tolerance
  std::vector<double> rel_halfwidth;
  std::vector<double> worst_rel_error;  // of constrained estimates

  void add(const Estimate& e, double truth, double tol) {
    if (!e.constrained) {
      ++unconstrained;
      return;
    }
    ++n;
    if (std::abs(e.value / truth - 1) <= tol) ++within_bar;
    worst_rel_error.push_back(std::abs(e.value / truth - 1));
    if (!std::isfinite(e.ci95_lo) || !std::isfinite(e.ci95_hi)) {
      ++null_interval;
      return;
    }
    if (e.ci95_hi <= e.ci95_lo) ++zero_width;
    if (e.ci95_lo <= truth && truth <= e.ci95_hi) ++covered;
    rel_halfwidth.push_back(0.5 * (e.ci95_hi - e.ci95_lo) / truth);
  }
  double coverage() const { return n ? double(covered) / n : NAN; }  // nulls are misses
  double median_rel_halfwidth() const { return rel_halfwidth.empty() ? NAN : median(rel_halfwidth); }
  double within_bar_fraction() const { return n ? double(within_bar) / n : NAN; }
  double max_rel_error() const {
    double m = 0;
    for (double x : worst_rel_error) m = std::max(m, x);
    return worst_rel_error.empty() ? NAN : m;
  }
  double constrained_fraction() const { return n + unconstrained ? double(n) / (n + unconstrained) : NAN; }
};

// Which parameters the scenario leaves identifiable: those must come back constrained in at least this
// fraction of datasets (0: the fitter may say "not identified" as often as it needs).
struct MustIdentify {
  double drain = 0.9, capacity = 0.9, tiss0_plateau = 0.9;
};

// A coverage bar below kCoverageBar needs its reason (issue 27: no pass bar below nominal without one).
struct LowerBar {
  double drain = kCoverageBar, capacity = kCoverageBar;
  std::string reason;
};

struct Scenario {
  std::string name, description;
  TruthParams params;
  Noise noise;
  Breakage breakage;
  double gap_span = 3.0;
  int repetitions = 5;
  MustIdentify must;
  LowerBar bar;
};

// R under per-point offsets >= 7% used to sit below the bar (200 seeds: 0.895 at 7%, 0.82 at 10%, 0.87 host-like;
// at 10% R came out 1.4% high on average and its between-dataset sd, 4.2%, was 1.4x what its interval implied).
// Three causes, each measured with a temporary per-dataset print of this study (2026-12-07, 200 seeds, not kept):
// - the cluster truncated the drain branch's own scatter: its tolerance, 2.5 x 1.4826 x MAD of ~10 points, ranged
//   10% to 30% at 10% offsets and dropped 1 to 3 branch points per dataset, so the cluster's centre followed the
//   densest window. Alone, a 3-sigma clipped tolerance took 10% to 0.945 (a prototype started from all points;
//   the fitter starts from the first cluster, drain_rate.cpp, which keeps the H200 host's fast K = 16 and 33
//   points out).
// - R = sum x^2 / sum x weighted fast points up: E = R exp(1.5 sigma^2), +1.4% at 10% on the same points. The
//   log-space fit is unbiased (mean +0.06%); alone it fixed the bias, not the coverage (0.83).
// - K=33, B=16 KiB fills X-Stage after its warm-up: T_period is a mean over the window, so it reads +9% on V/T.
//   The 5% cluster left it out at small offsets; a cluster wide enough for 10% offsets took it in (+0.5% on R at
//   5-7%). Now only points that fill within their warm-up are used.
// With all three: 0.985 at 5%, 0.970 at 7%, 0.935 at 10%, 0.955 host-like; median half-widths 1.47% at 1%
// (unchanged), 3.54% at 5% (3.29%), 4.81% at 7% (4.40%), 6.74% at 10% (6.01%). The committed H200/H100 host
// calibrations refit to within 0.1% of their R (one small-K file: -1%).

struct Result {
  Scenario scenario;
  int num_seeds = 0;
  Tally drain, capacity, tiss0;
  std::map<std::string, Tally> tiss0_by_source;
  Tally capacity_vs_planted;  // only where the judged truth is an effective Q (absorbing prefix)
  // Where Q(K) is not constrained, what a prediction uses instead: PlatformModel::capacity_bracket(K) from the
  // file's model section. Covered where lower <= the effective Q <= upper.
  int bracket_n = 0, bracket_covered = 0, bracket_bounded_below = 0, bracket_bounded_above = 0, bracket_truth_below = 0, bracket_truth_above = 0;
  double bracket_coverage() const { return bracket_n ? double(bracket_covered) / bracket_n : NAN; }
};

// The Q that eq. 7 describes for isolated bursts: the planted Q plus what an absorbing prefix drains early; under
// two capacities, the tail's (what a burst far past the knee behaves as: the MegaMoE and FA bursts are such).
double effective_capacity(const Scenario& sc, int k) {
  const Breakage& b = sc.breakage;
  if (b.tail_capacity_fraction > 0) return b.tail_capacity_fraction * sc.params.capacity_bytes(k);
  return sc.params.capacity_bytes(k) + b.isolated_prefix_bytes * (1 - 1 / b.isolated_prefix_speedup);
}

// The H200 host path's scale: R ~ 52 GB/s, T_iss^0 0.1-0.2 us at 1-16 KiB per producer, Q ~ 1-2 MiB.
TruthParams host_like() {
  TruthParams p;
  p.drain_rate_bps = 52e9;
  p.capacity_max_bytes = 2.4 * kMiB;
  p.capacity_half_k = 33;
  p.tiss0_fixed_s = 0.09e-6;
  p.rate_per_producer_bps = 16384 / 0.12e-6;
  return p;
}

std::string fmt_order(double order) {
  char text[200];
  std::snprintf(text, sizeof text, "isolated knee softened to (T0^n + D^n)^(1/n), n = %g, 1%% offsets: Q may come back not "
                "identified", order);
  return text;
}

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> s = [] {
    std::vector<Scenario> v;
    const TruthParams base;
    v.push_back({"repetition_noise_only", "no per-point offset, 3% per-repetition jitter", base, {0.0, 0.03}, {}});
    v.push_back({"offsets_1pct", "1% per-point offsets, 2% per-repetition jitter", base, {0.01, 0.02}, {}});
    // With offsets near the knee's contrast, eq. 7's per-point misfit tests call Q "not identified" more
    // often (11% of datasets at 7%, 16% at 10%): allowed, that is the fitter declining, not a miss.
    v.push_back({"offsets_5pct", "5% between-run per-point offsets, 2% jitter", base, {0.05, 0.02}, {}, 3.0, 5,
                 {0.9, 0.75, 0.9}});
    v.push_back({"offsets_7pct", "7% between-run per-point offsets (the H200 spread), 2% jitter", base, {0.07, 0.02}, {},
                 3.0, 5, {0.9, 0.75, 0.9}});
    v.push_back({"offsets_10pct", "10% between-run per-point offsets, 2% jitter", base, {0.10, 0.02}, {}, 3.0, 5,
                 {0.9, 0.6, 0.85}});
    {
      Breakage b;
      b.isolated_prefix_bytes = 0.5 * kMiB;
      b.isolated_prefix_speedup = 2.0;
      // Eq. 7 still fits these bursts exactly, with Q_eff = Q + P (1 - 1/speedup): what isolated bursts can
      // identify is that effective capacity, so Q's coverage is judged against it; the table also gives the
      // coverage of the planted Q (not owed: no isolated-burst fit can separate the prefix from Q).
      v.push_back({"isolated_absorbing_prefix",
                   "isolated bursts drain their first 0.5 MiB 2x faster (absorbed), 1% offsets: Q is judged against "
                   "eq. 7's effective Q = Q + 0.25 MiB, and Q may come back not identified",
                   base, {0.01, 0.02}, b, 3.0, 5, {0.9, 0.0, 0.9}});
    }
    {
      Breakage b;
      b.drain_drift = 0.06;
      // The isolated bursts run late, at a faster R than the zero-gap points: eq. 7 with the zero-gap R does
      // not fit them, and the fitter must say so (Q not identified) rather than print a Q; R's interval must
      // still cover the run's median R.
      // Known miss: where the isolated slope's interval still overlaps the zero-gap R's, Q keeps the early R and is
      // wrong. The knee-shape test (knee_shape.cpp: the branch's V - R T tilts along it beyond its own and R's
      // noise) took these from 16 of 400 Q rows on 200 seeds to 3, none covered; the other 397 are not identified.
      v.push_back({"drain_drift", "R drifts by 6% (-3% to +3%) over the sweep in measurement order, 1% offsets: "
                                  "Q may come back not identified", base, {0.01, 0.02}, b, 3.0, 5, {0.9, 0.0, 0.9},
                   {kCoverageBar, 0.0, "Q: constrained in 3 of 400 rows and then biased by the drift (the branch's tilt "
                                       "within 3 standard errors of its slope and of R); asserted instead: <= 10% of Q "
                                       "rows constrained"}});
    }
    // Soft knees T = (T0^n + D^n)^(1/n) read Q low under eq. 7 (capacity.cpp, "Not caught"; about 17% on K = 33 at
    // order 3, where the excess tends to 2.4% along the whole branch). Q's interval spans the fits without the
    // branch's first one and two points (calibration.cpp) and Q under every knee of orders 2-6 that the data do not
    // reject (knee_shape.cpp, 2026-12-07). Before that envelope (200 seeds): 0.650 at order 2.5 (97 of 400 rows
    // not identified by the tilt test), 0.530 at 3, 0.772 at 3.5, 0.942 at 4, 1.000 at 5; with it 1.000, 0.964,
    // 0.922, 0.975, 1.000. The envelope's shapes are the generator's family: the log-sum-exp knees below are not.
    for (auto [order, tag] : {std::tuple{4.0, ""}, std::tuple{3.0, "_order3"}, std::tuple{2.5, "_order2_5"},
                              std::tuple{3.5, "_order3_5"}, std::tuple{5.0, "_order5"}}) {
      Breakage b;
      b.soft_knee_order = order;
      v.push_back({std::string("soft_knee") + tag, fmt_order(order), base, {0.01, 0.02}, b, 3.0, 5, {0.9, 0.0, 0.9}});
    }
    // Knees outside the fitted family (log-sum-exp, truth_generator.hpp): the shape envelope was made on p-norm
    // knees, so these show whether it transfers. 200 seeds: s = 0.25 T0 1.000 (5 of 400 rows not identified);
    // s = 0.5 T0 0.901 (311 of 345; 55 not identified), at the bar with no margin: its excess at the knee, s ln 2
    // = 35% of T0, is more than a knee of order 2.5 has (32%), and below Q it also lifts the floor (by 6% of T0 at
    // V = Q), which the envelope's floor line is fitted to; which of the two costs the coverage was not measured.
    for (auto [scale, tag] : {std::tuple{0.25, "0_25"}, std::tuple{0.5, "0_5"}}) {
      Breakage b;
      b.softplus_knee_scale = scale;
      char text[200];
      std::snprintf(text, sizeof text, "isolated knee softened to s ln(e^(T0/s) + e^(D/s)), s = %g T0 (not a p-norm), "
                    "1%% offsets: Q may come back not identified", scale);
      v.push_back({std::string("softplus_knee_") + tag, text, base, {0.01, 0.02}, b, 3.0, 5, {0.9, 0.0, 0.9}});
    }
    // Data that break eq. 7 the way the H100 host does (truth_generator.hpp, tail_capacity_fraction): the floor
    // holds to Q, bursts past it behave as Q/4 within about Q/2. One Q cannot fit both, so the fitter must not
    // identify one, and the bracket a prediction uses must hold the tail's Q. Before 2026-12-07 late it started at the
    // floor and held it in none of 400 rows; a bracket starting at the branch's weighted V - R T held it in none
    // either (that estimate sat at 0.75-0.81 MB against tails of 0.31 and 0.50 MB), hence 0.
    {
      Breakage b;
      b.tail_capacity_fraction = 0.25;
      b.tail_width_fraction = 0.4;
      v.push_back({"two_capacity_knee", "isolated bursts hold the floor to Q but past it behave as Q_tail = Q/4 "
                                        "(c(V) falls from Q to Q/4 over about 0.4 Q), host-like scale, 1% offsets: "
                                        "Q must come back not identified and the bracket must hold Q_tail",
                   host_like(), {0.01, 0.02}, b, 3.0, 5, {0.9, 0.0, 0.45},
                   {kCoverageBar, 0.0, "Q: no single Q exists (two capacities); asserted instead: <= 10% of Q rows "
                                       "constrained"}});
    }
    v.push_back({"gap_sweep_short", "both gap sweeps stop at 0.3 V/R (still drain-limited), 1% offsets: their "
                                    "T_iss^0 rows must come back as upper bounds", base, {0.01, 0.02}, {}, 0.3, 5,
                 {0.9, 0.9, 0.0}});
    // At the host's Q the K = 132 gap sweep's V (4.3 MB) lies above the knee: its plateau is T_iss^iso, which
    // the fitter reports as an upper bound, so only one plateau row per dataset is owed.
    v.push_back({"host_like_offsets_7pct", "the H200 host path's scale (R 52 GB/s, Q 1-2 MiB, T_iss^0 0.1-0.2 us) "
                                           "with 7% per-point offsets", host_like(), {0.07, 0.02}, {}, 3.0, 5,
                 {0.9, 0.75, 0.45}});
    v.push_back({"one_repetition", "1% per-point offsets, 2% jitter, 1 repetition per point", base, {0.01, 0.02}, {},
                 3.0, 1});
    return v;
  }();
  return s;
}

json number(double x) { return std::isfinite(x) ? json(x) : json(); }

json tally_json(const Tally& t) {
  return {{"num_constrained", t.n},
          {"covered", t.covered},
          {"null_interval", t.null_interval},
          {"zero_width", t.zero_width},
          {"not_identified_or_bound", t.unconstrained},
          {"coverage", number(t.coverage())},
          {"median_rel_halfwidth", number(t.median_rel_halfwidth())},
          {"within_tolerance_fraction", number(t.within_bar_fraction())},
          {"max_rel_error", number(t.max_rel_error())}};
}

json result_json(const Result& r) {
  const Scenario& sc = r.scenario;
  json by_source = json::object();
  for (const auto& [source, t] : r.tiss0_by_source) by_source[source] = tally_json(t);
  return {{"study", "fit interval coverage on independent synthetic truth (tests/fit/truth_coverage_test.cpp)"},
          {"scenario", sc.name},
          {"description", sc.description},
          {"num_seeds", r.num_seeds},
          {"bootstrap_resamples", kResamples},
          {"nominal", kNominal},
          {"coverage_bar", kCoverageBar},
          {"truth", {{"R_Bps", sc.params.drain_rate_bps},
                     {"Q_bytes", {{"33", sc.params.capacity_bytes(33)}, {"132", sc.params.capacity_bytes(132)}}},
                     {"Q_judged_bytes", {{"33", effective_capacity(sc, 33)}, {"132", effective_capacity(sc, 132)}}},
                     {"tiss0", "tiss0_fixed_s + B / rate_per_producer_bps * (1 + contention_per_132 K / 132)"},
                     {"tiss0_fixed_s", sc.params.tiss0_fixed_s},
                     {"rate_per_producer_bps", sc.params.rate_per_producer_bps}}},
          {"noise", {{"sigma_point", sc.noise.sigma_point}, {"sigma_rep", sc.noise.sigma_rep},
                     {"repetitions", sc.repetitions}}},
          {"breakage", {{"isolated_prefix_bytes", sc.breakage.isolated_prefix_bytes},
                        {"isolated_prefix_speedup", sc.breakage.isolated_prefix_speedup},
                        {"drain_drift", sc.breakage.drain_drift},
                        {"soft_knee_order", sc.breakage.soft_knee_order},
                        {"softplus_knee_scale", sc.breakage.softplus_knee_scale},
                        {"gap_span_x_V_over_R", sc.gap_span}}},
          {"definitions", {{"coverage", "covered / num_constrained; a null interval counts as not covered"},
                           {"not_identified_or_bound", "estimates reported constrained = false: no interval owed"},
                           {"within_tolerance_fraction", "constrained estimates within R 3%, Q 15%, T_iss0 10%"}}},
          {"R", tally_json(r.drain)},
          {"Q", tally_json(r.capacity)},
          {"tiss0", tally_json(r.tiss0)},
          {"tiss0_by_source", by_source},
          {"Q_bracket_where_not_constrained",
           {{"n", r.bracket_n}, {"covered", r.bracket_covered}, {"bounded_below", r.bracket_bounded_below}, {"bounded_above", r.bracket_bounded_above},
            {"truth_below_floor_bound", r.bracket_truth_below}, {"truth_above_upper_bound", r.bracket_truth_above},
            {"coverage", number(r.bracket_coverage())},
            {"definition", "PlatformModel::capacity_bracket(K) (floors and the drain branch's Q below, identified Q rows "
                           "of larger K above; drained bursts bound nothing from above) holds the effective Q"}}},
          {"Q_vs_planted", r.capacity_vs_planted.n + r.capacity_vs_planted.unconstrained ? tally_json(r.capacity_vs_planted)
                                                                                          : json()}};
}

void write_atomic(const std::string& path, const json& j) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) {
      ADD_FAILURE() << "could not write " << tmp;
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) ADD_FAILURE() << "could not rename " << tmp << " to " << path;
}

Result run_scenario(const Scenario& sc, int seeds) {
  Result r{sc, seeds, {}, {}, {}, {}, {}};
  FitOptions options;
  options.bootstrap_resamples = kResamples;
  TruthSweep sw;
  sw.repetitions = sc.repetitions;
  sw.gap_span = sc.gap_span;
  const TruthParams& p = sc.params;
  for (int seed = 1; seed <= seeds; ++seed) {
    TruthGenerator gen(p, sc.noise, sc.breakage, static_cast<std::uint64_t>(seed));
    options.seed = 1000 + static_cast<std::uint64_t>(seed);
    const CalibrationFit fit = fit_calibration(gen.sweep(sw), options);
    r.drain.add(fit.drain.drain_rate_bps, p.drain_rate_bps, kDrainTol);
    const model::PlatformModel pm = model::PlatformModel::from_json(fit.to_json());
    for (const auto& q : fit.capacity) {
      if (!q.capacity_bytes.constrained) {
        const model::CapacityBracket b = pm.capacity_bracket(q.num_producers);
        const double truth = effective_capacity(sc, q.num_producers);
        ++r.bracket_n;
        r.bracket_bounded_below += b.lower_bytes > 0;
        r.bracket_bounded_above += std::isfinite(b.upper_bytes);
        r.bracket_covered += b.consistent && b.lower_bytes <= truth && truth <= b.upper_bytes;
        r.bracket_truth_below += truth < b.lower_bytes;
        r.bracket_truth_above += truth > b.upper_bytes;
      }
      r.capacity.add(q.capacity_bytes, effective_capacity(sc, q.num_producers), kCapacityTol);
      if (sc.breakage.isolated_prefix_bytes > 0)
        r.capacity_vs_planted.add(q.capacity_bytes, p.capacity_bytes(q.num_producers), kCapacityTol);
    }
    for (const auto& row : fit.tiss0) {
      const double truth = p.tiss0_s(row.num_producers, row.bytes_per_producer);
      r.tiss0.add(row.issue_time_s, truth, kTiss0Tol);
      r.tiss0_by_source[row.source].add(row.issue_time_s, truth, kTiss0Tol);
    }
  }
  return r;
}

// Each scenario runs once per process; its test reads it.
const Result& study(const std::string& name) {
  static std::map<std::string, Result> results;
  if (auto it = results.find(name); it != results.end()) return it->second;
  for (const Scenario& sc : scenarios())
    if (sc.name == name) {
      const Result& r = results.emplace(name, run_scenario(sc, num_seeds())).first->second;
      if (const char* dir = std::getenv("XS_COVERAGE_DIR"); dir && *dir) {
        std::filesystem::create_directories(dir);
        write_atomic((std::filesystem::path(dir) / (name + ".json")).string(), result_json(r));
      }
      return r;
    }
  throw std::logic_error("no scenario " + name);
}

std::string summary(const char* what, const Tally& t) {
  char line[400];
  std::snprintf(line, sizeof line,
                "%s: coverage %.3f (%d/%d, null %d, zero-width %d), not identified or bound %d, median half-width "
                "%.2f%%, within tolerance %.3f, worst error %.1f%%",
                what, t.coverage(), t.covered, t.n, t.null_interval, t.zero_width, t.unconstrained,
                100 * t.median_rel_halfwidth(), t.within_bar_fraction(), 100 * t.max_rel_error());
  return line;
}

void expect_meets_bar(const std::string& name) {
  const Result& r = study(name);
  SCOPED_TRACE(name + ": " + r.scenario.description);
  const LowerBar& bar = r.scenario.bar;
  const std::tuple<const char*, const Tally*, double> kinds[] = {
      {"R", &r.drain, bar.drain}, {"Q", &r.capacity, bar.capacity}, {"T_iss0", &r.tiss0, kCoverageBar}};
  for (auto [what, t, at_least] : kinds) {
    const std::string line = summary(what, *t);
    std::printf("[coverage] %s %s\n", name.c_str(), line.c_str());
    if (at_least < kCoverageBar) {
      ASSERT_FALSE(bar.reason.empty()) << "a bar below nominal needs its reason";
      std::printf("[coverage] %s %s bar %.2f < %.2f: %s\n", name.c_str(), what, at_least, kCoverageBar, bar.reason.c_str());
    }
    if (t->n > 0) {
      EXPECT_GE(t->coverage(), at_least) << line;
    }
    EXPECT_EQ(t->zero_width, 0) << line;
  }
  if (bar.capacity == 0.0) {
    EXPECT_LE(r.capacity.constrained_fraction(), 0.10) << summary("Q", r.capacity);
  }
  for (const auto& [source, t] : r.tiss0_by_source)
    std::printf("[coverage] %s %s\n", name.c_str(), summary(("T_iss0 " + source).c_str(), t).c_str());
  if (r.bracket_n > 0) {
    std::printf("[coverage] %s Q bracket where not constrained: %d/%d hold the effective Q (%d bounded below, %d above; "
                "the truth below the lower bound %d, above the upper bound %d)\n", name.c_str(), r.bracket_covered,
                r.bracket_n, r.bracket_bounded_below, r.bracket_bounded_above, r.bracket_truth_below, r.bracket_truth_above);
    EXPECT_GE(r.bracket_coverage(), kCoverageBar) << "the bracket a prediction uses for an unidentified Q";
  }
  const MustIdentify& must = r.scenario.must;
  EXPECT_GE(r.drain.constrained_fraction(), must.drain) << summary("R", r.drain);
  if (must.capacity > 0) {
    EXPECT_GE(r.capacity.constrained_fraction(), must.capacity) << summary("Q", r.capacity);
  }
  if (must.tiss0_plateau > 0) {
    const auto it = r.tiss0_by_source.find("plateau");
    ASSERT_NE(it, r.tiss0_by_source.end()) << "no plateau row at all";
    EXPECT_GE(it->second.n, must.tiss0_plateau * 2 * r.num_seeds) << summary("T_iss0 plateau", it->second);
  }
}

TEST(TruthCoverage, RepetitionNoiseOnly) { expect_meets_bar("repetition_noise_only"); }
TEST(TruthCoverage, Offsets1Pct) { expect_meets_bar("offsets_1pct"); }
TEST(TruthCoverage, Offsets5Pct) { expect_meets_bar("offsets_5pct"); }
TEST(TruthCoverage, Offsets7Pct) { expect_meets_bar("offsets_7pct"); }
TEST(TruthCoverage, Offsets10Pct) { expect_meets_bar("offsets_10pct"); }
TEST(TruthCoverage, IsolatedAbsorbingPrefix) { expect_meets_bar("isolated_absorbing_prefix"); }
TEST(TruthCoverage, DrainDrift) { expect_meets_bar("drain_drift"); }
TEST(TruthCoverage, SoftKnee) { expect_meets_bar("soft_knee"); }
TEST(TruthCoverage, SoftKneeOrder3) { expect_meets_bar("soft_knee_order3"); }
TEST(TruthCoverage, SoftKneeOrder2_5) { expect_meets_bar("soft_knee_order2_5"); }
TEST(TruthCoverage, SoftKneeOrder3_5) { expect_meets_bar("soft_knee_order3_5"); }
TEST(TruthCoverage, SoftKneeOrder5) { expect_meets_bar("soft_knee_order5"); }
TEST(TruthCoverage, SoftplusKnee0_25) { expect_meets_bar("softplus_knee_0_25"); }
TEST(TruthCoverage, SoftplusKnee0_5) { expect_meets_bar("softplus_knee_0_5"); }
TEST(TruthCoverage, HostLikeOffsets7Pct) { expect_meets_bar("host_like_offsets_7pct"); }
TEST(TruthCoverage, TwoCapacityKnee) { expect_meets_bar("two_capacity_knee"); }

TEST(TruthCoverage, GapSweepShortGivesUpperBoundsNotPlateaus) {
  expect_meets_bar("gap_sweep_short");
  const Result& r = study("gap_sweep_short");
  // Both gap sweeps stop at 0.3 V/R: no (K,B) of theirs may come back as a constrained plateau or max_gap row.
  for (const char* source : {"plateau", "max_gap"})
    if (auto it = r.tiss0_by_source.find(source); it != r.tiss0_by_source.end())
      EXPECT_EQ(it->second.n, 0) << summary(source, it->second);
}

TEST(TruthCoverage, OneRepetitionPerPoint) {
  // One sample per point: an interval must come from between-point scatter or be absent; never zero width.
  expect_meets_bar("one_repetition");
}

}  // namespace
}  // namespace xs::fit
