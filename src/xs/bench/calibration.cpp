// xstage bench layer: calibration analysis and summaries (see calibration.hpp).
#include "xs/bench/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "xs/common/units.hpp"

namespace xs::bench {

void analyse_calibration(report::ResultFile& file, const std::optional<Reference>& reference,
                         const fit::FitOptions& fit_options) {
  // The copy-engine rate of the host path bounds R (FitOptions::path_rate_limit_bps): SM stores and the
  // copy engine cross the same PCIe link. On other targets (peer over NVLink: several SMs can outrun one
  // copy engine) it is recorded beside R only.
  fit::FitOptions options = fit_options;
  if (reference && reference->target == "host" && reference->copy_engine_bps && options.path_rate_limit_bps <= 0)
    options.path_rate_limit_bps = *reference->copy_engine_bps;
  const fit::CalibrationFit fitted = fit::fit_calibration(file.points, options);
  const fit::FittedModel full = fit::fitted_model(fitted);
  fit::CrossValidationOptions cv;
  cv.boundaries.plateau_gap_factor = options.plateau_gap_factor;
  cv.target = fitted.options.target;
  // Held-out figures: each fold refitted with the same options on the other folds. In-sample: the full fit
  // on its own points (residuals, not a validation); its per-point values are the points' `prediction`.
  const fit::CrossValidation held_out = fit::cross_validate(file.points, full, options, cv);
  nlohmann::json in_sample = fit::validate(file.points, full, full, cv.boundaries, cv.target).to_json();
  in_sample.erase("columns");
  in_sample.erase("rows");
  fit::attach_predictions(file.points, full.platform);
  file.model = fitted.to_json();
  file.validation = {
      {"held_out", held_out.to_json()},
      {"in_sample", std::move(in_sample)},
      {"regime_boundaries",
       {{"plateau_gap_factor", cv.boundaries.plateau_gap_factor},
        {"definition", "from the full-data model, h = V/R, t0 = T_iss^0(K,V): periodic drain_limited G < h - t0, "
                       "plateau G >= plateau_gap_factor * h, transition otherwise; isolated points: isolated"}}}};
  if (reference) {
    nlohmann::json ref = {{"target", reference->target}};
    if (reference->copy_engine_bps) {
      ref["copy_engine_Bps"] = *reference->copy_engine_bps;
      ref["R_over_copy_engine"] = fitted.drain.drain_rate_bps.value / *reference->copy_engine_bps;
      ref["bounds_R"] = options.path_rate_limit_bps > 0;  // the fit used it as the path-rate limit
    } else {
      ref["copy_engine_Bps"] = nullptr;
    }
    file.extra["reference"] = ref;
  }
}

namespace {

double num(const nlohmann::json& j, const char* key) {
  return (j.contains(key) && j.at(key).is_number()) ? j.at(key).get<double>() : std::nan("");
}

std::string ci(const nlohmann::json& j, const char* key, std::string (*fmt_fn)(double)) {
  if (!j.contains(key) || !j.at(key).is_array() || j.at(key).size() != 2 || !j.at(key)[0].is_number())
    return "n/a";
  return fmt::format("[{}, {}]", fmt_fn(j.at(key)[0].get<double>()), fmt_fn(j.at(key)[1].get<double>()));
}

std::string pct(const nlohmann::json& j, const char* key) {
  const double x = num(j, key);
  return std::isfinite(x) ? fmt::format("{:.1f}%", 100 * x) : "-";
}

// Held-out table per regime, then the in-sample line, each labelled with what it is.
void print_validation(const nlohmann::json& v, std::FILE* out) {
  if (!v.is_object() || !v.contains("held_out") || !v.at("held_out").is_object()) return;
  const auto regimes = [](const nlohmann::json& section) {  // in curve order, those present
    std::vector<std::pair<std::string, nlohmann::json>> rows;
    if (section.contains("regimes") && section.at("regimes").is_object())
      for (const char* name : {"drain_limited", "transition", "plateau", "isolated", "unclassified"})
        if (section.at("regimes").contains(name)) rows.emplace_back(name, section.at("regimes").at(name));
    return rows;
  };
  const auto& h = v.at("held_out");
  fmt::print(out, "  validation, HELD-OUT ({}-fold cross-validation: each point predicted by a fit that did not "
                  "see it)\n", h.value("k", 0));
  // extrapolated: predictions whose T_iss^0 lookup left the model's table (clamped to its end value).
  fmt::print(out, "    {:<14} {:>6} {:>9} {:>12}   {:>17}   {:>17}\n", "regime", "points", "predicted", "extrapolated",
             "T_iss med / p90", "T_period med / p90");
  for (const auto& [name, r] : regimes(h))
    fmt::print(out, "    {:<14} {:>6} {:>9} {:>12}   {:>17}   {:>17}\n", name, r.value("num_points", 0),
               r.value("num_predicted", 0), r.value("num_tiss0_extrapolated", 0),
               fmt::format("{} / {}", pct(r, "issue_median_rel_err"), pct(r, "issue_p90_rel_err")),
               fmt::format("{} / {}", pct(r, "period_median_rel_err"), pct(r, "period_p90_rel_err")));
  if (h.contains("unpredicted") && h.at("unpredicted").is_array())
    for (const auto& u : h.at("unpredicted"))
      fmt::print(out, "    unpredicted: {} x {}\n", u.value("count", 0), u.value("reason", ""));
  if (!v.contains("in_sample") || !v.at("in_sample").is_object()) return;
  fmt::print(out, "  in-sample residuals (full fit on its own points; NOT a validation), T_iss med / p90:");
  const char* sep = "";
  for (const auto& [name, r] : regimes(v.at("in_sample"))) {
    fmt::print(out, "{} {} {} / {}", sep, name, pct(r, "issue_median_rel_err"), pct(r, "issue_p90_rel_err"));
    sep = ",";
  }
  fmt::print(out, "\n");
}

}  // namespace

void print_calibration_summary(const report::ResultFile& file, std::FILE* out) {
  const auto& m = file.model;
  if (m.is_null()) {
    fmt::print(out, "no model fitted\n");
    return;
  }
  fmt::print(out, "\nX-Stage platform model M_X = (T_iss^0(K,V), R, Q(K))\n");
  if (m.value("R_bound", "fit") == "not_identified")
    fmt::print(out, "  R (effective drain rate)   NOT IDENTIFIED ({} is a diagnostic; see model.fit.R.note)\n",
               format_rate(num(m, "R_Bps")));
  else
    fmt::print(out, "  R (effective drain rate)   {}{}  95% CI {}\n", m.value("R_bound", "fit") == "lower" ? ">= " : "",
               format_rate(num(m, "R_Bps")), ci(m, "R_ci95", format_rate));
  if (file.extra.contains("reference")) {
    const auto& ref = file.extra.at("reference");
    if (ref.contains("copy_engine_Bps") && ref.at("copy_engine_Bps").is_number())
      fmt::print(out, "  copy engine, same path     {}  (R / copy engine = {:.3f})\n",
                 format_rate(ref.at("copy_engine_Bps").get<double>()), num(ref, "R_over_copy_engine"));
  }
  if (m.contains("tiss0") && m.at("tiss0").is_array()) {
    fmt::print(out, "  T_iss^0 (backpressure-free issue time, large-gap plateau)\n");
    fmt::print(out, "    {:>5} {:>11} {:>11} {:>12}  {}\n", "K", "B", "V", "T_iss^0", "95% CI");
    for (const auto& row : m.at("tiss0")) {
      const bool constrained = !row.contains("constrained") || row.at("constrained") == true;
      fmt::print(out, "    {:>5} {:>11} {:>11} {:>12}  {}{}\n", row.value("K", 0), format_bytes(num(row, "B_bytes")),
                 format_bytes(num(row, "V_bytes")), format_seconds(num(row, "s")), ci(row, "ci95", format_seconds),
                 constrained ? "" : "  (unconstrained: no plateau point)");
    }
  }
  if (m.contains("Q") && m.at("Q").is_array()) {
    fmt::print(out, "  Q(K) (effective outstanding capacity, isolated-burst knee)\n");
    const nlohmann::json* fit_rows = m.contains("fit") && m.at("fit").contains("Q") ? &m.at("fit").at("Q") : nullptr;
    for (std::size_t i = 0; i < m.at("Q").size(); ++i) {
      const auto& row = m.at("Q")[i];
      const std::string bound = row.value("bound", "fit");
      if (bound == "not_identified") {
        // The value is a diagnostic, not a measurement: print why instead (the fit's note names the bounds).
        std::string why = fit_rows && i < fit_rows->size() ? (*fit_rows)[i].value("note", "") : "";
        const auto at = why.find("not identified");
        why = at == std::string::npos ? why : why.substr(std::min(why.size(), at + std::string("not identified: ").size()));
        fmt::print(out, "    K={:<5} Q NOT IDENTIFIED: {}\n", row.value("K", 0), why);
        continue;
      }
      if (bound == "lower" && num(row, "bytes") < bench::kTrivialCapacityBoundBytes) {
        fmt::print(out, "    K={:<5} Q not bounded by this sweep (no knee; the lower bound, {}, is trivial)\n",
                   row.value("K", 0), format_bytes(num(row, "bytes")));
        continue;
      }
      fmt::print(out, "    K={:<5} Q {} {}  95% CI {}{}\n", row.value("K", 0), bound == "lower" ? ">=" : "=",
                 format_bytes(num(row, "bytes")), ci(row, "ci95", format_bytes),
                 bound == "lower" ? "  (no knee inside the sweep: lower bound)" : "");
    }
  }
  print_validation(file.validation, out);
  std::size_t skipped = 0, wrong = 0;
  for (const auto& p : file.points) {
    skipped += p.skipped ? 1 : 0;
    wrong += p.verification.wrong > 0 ? 1 : 0;
  }
  fmt::print(out, "  points: {} measured, {} skipped, {} failed verification\n", file.points.size() - skipped,
             skipped, wrong);
}

void print_loaded_summary(const std::vector<PointRecord>& points, std::FILE* out) {
  bool header = false;
  for (const auto& p : points) {
    if (p.spec.suite != Suite::kLoaded) continue;
    if (!header) {
      fmt::print(out, "\nloaded mainloop under remote stores (tile time: median over CTAs and steady tiles)\n");
      fmt::print(out, "  {:<7} {:<11} {:<4} {:<9} {:>4} {:>9} {:>9} {:>11} {:>10} {:>10} {:>22} {:>11} {:>10}\n", "target",
                 "mainloop", "ws", "pattern", "K", "B", "G", "offered", "tile", "baseline", "slowdown [p10, p90]",
                 "issued", "tail");
      header = true;
    }
    const auto& s = p.spec;
    if (p.skipped || !p.loaded) {
      fmt::print(out, "  {:<7} {:<11} {:<4} {:<9} {:>4} {:>9} {:>9}  skipped: {}\n", s.target, mainloop_name(s.loaded.mainloop),
                 working_set_name(s.loaded.working_set), address_mode_name(s.address_mode), s.num_producers,
                 format_bytes(static_cast<double>(s.bytes_per_producer)), format_seconds(s.gap_s), p.skip_reason);
      continue;
    }
    const auto& m = *p.loaded;
    // Injection epilogue: closed loop (no offered rate); the slowdown is of the mean tile with its epilogue, and
    // the line ends with the epilogue's median store issue and that mean.
    const bool epilogue = s.loaded.injection == Injection::kEpilogue && m.epilogue.has_value();
    const std::string offered = epilogue     ? "epilogue"
                                : s.gap_s > 0 ? format_rate(static_cast<double>(s.volume_bytes()) / s.gap_s)
                                              : "unpaced";
    const std::string epilogue_note =
        epilogue ? fmt::format("  epilogue {} mean tile+epilogue {}", format_seconds(m.epilogue->epilogue_time_s.median),
                               format_seconds(m.epilogue->mean_tile_epilogue_time_s.median))
                 : "";
    fmt::print(out, "  {:<7} {:<11} {:<4} {:<9} {:>4} {:>9} {:>9} {:>11} {:>10} {:>10} {:>22} {:>11} {:>10}{}{}\n", s.target,
               mainloop_name(s.loaded.mainloop), working_set_name(s.loaded.working_set), address_mode_name(s.address_mode),
               s.num_producers, format_bytes(static_cast<double>(s.bytes_per_producer)), format_seconds(s.gap_s), offered,
               format_seconds(m.tile_time_s.median), format_seconds(m.baseline_tile_time_s.median),
               fmt::format("{:.3f} [{:.3f}, {:.3f}]", m.slowdown.median, m.slowdown.p10, m.slowdown.p90),
               format_rate(m.issue_rate_bps.median), format_seconds(m.drain_tail_s.median),
               p.verification.wrong ? "  WRONG DATA" : "", epilogue_note);
  }
}

void print_points_table(const std::vector<PointRecord>& points, std::FILE* out) {
  bool completion = false;
  for (const auto& p : points) completion = completion || p.completion_s.has_value();
  fmt::print(out, "{:<34} {:>5} {:>10} {:>11} {:>12} {:>12} {:>12} {:>12}{}\n", "id", "K", "B", "G", "T_iss",
             "T_iss pred", "T_period", "T_per pred", completion ? "  completion        V/R" : "");
  for (const auto& p : points) {
    if (p.skipped) {
      fmt::print(out, "{:<34} {:>5} {:>10} {:>11}  skipped: {}\n", p.id, p.spec.num_producers,
                 format_bytes(static_cast<double>(p.spec.bytes_per_producer)), format_seconds(p.spec.gap_s),
                 p.skip_reason);
      continue;
    }
    const bool periodic = p.spec.suite != Suite::kIsolated;
    // Completion mode: issue start -> remote-visible (fence), beside the drain horizon V/R.
    const std::string done =
        p.completion_s ? fmt::format("  {:>10} {:>10}", format_seconds(p.completion_s->median),
                                     p.prediction ? format_seconds(p.prediction->drain_horizon_s) : "-")
                       : "";
    fmt::print(out, "{:<34} {:>5} {:>10} {:>11} {:>12} {:>12} {:>12} {:>12}{}{}\n", p.id, p.spec.num_producers,
               format_bytes(static_cast<double>(p.spec.bytes_per_producer)), format_seconds(p.spec.gap_s),
               format_seconds(p.issue_time_s.median),
               p.prediction ? format_seconds(p.prediction->issue_time_s) : "-",
               periodic ? format_seconds(p.period_s.median) : "-",
               (periodic && p.prediction) ? format_seconds(p.prediction->period_s) : "-", done,
               p.verification.wrong ? "  WRONG DATA" : "");
  }
}

}  // namespace xs::bench
