// xstage attention host layer: the Table-3-style printout of fa_a2a points (see fa_report.hpp print_fa_table).
#include <fmt/format.h>

#include <initializer_list>
#include <map>
#include <string>

#include "xs/attention/io/fa_report.hpp"

namespace xs::attention {
namespace {

using nlohmann::json;

// The value at a key path, or null where any key is missing (files written before issue 13 lack some).
const json& at(const json& j, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object() || !cur->contains(key)) return kNull;
    cur = &(*cur)[key];
  }
  return *cur;
}

std::string us(const json& v) { return v.is_number() ? fmt::format("{:.1f}", v.get<double>() * 1e6) : "-"; }
std::string percent(const json& v) { return v.is_number() ? fmt::format("{:.1f}%", 100 * v.get<double>()) : "-"; }
std::string text(const json& v) { return v.is_string() ? v.get<std::string>() : "-"; }

}  // namespace

void print_fa_table(const std::vector<json>& points, std::FILE* out) {
  // One table per (target, heads per rank); columns are M.
  std::map<std::string, std::vector<const json*>> by_target;
  for (const auto& p : points)
    by_target[fmt::format("{}, {} heads per rank", p["spec"]["target"].get<std::string>(),
                          p["spec"]["heads"].get<int>())].push_back(&p);
  for (const auto& [target, pts] : by_target) {
    fmt::print(out, "\nfa_a2a, target {} (times in us)\n{:<26}", target, "M");
    for (const auto* p : pts) fmt::print(out, "{:>12}", (*p)["spec"]["M"].get<int>());
    fmt::print(out, "\n");
    auto row = [&](const char* name, auto cell) {
      fmt::print(out, "{:<26}", name);
      for (const auto* p : pts) fmt::print(out, "{:>12}", p->contains("measured") ? cell(*p) : std::string("skipped"));
      fmt::print(out, "\n");
    };
    auto measured = [&](const char* name, std::initializer_list<const char*> path, auto format) {
      row(name, [&](const json& p) { return format(at(p["measured"], path)); });
    };
    auto predicted = [&](const char* name, std::initializer_list<const char*> path, auto format) {
      row(name, [&](const json& p) { return format(at(p, {"prediction"}).is_null() ? json() : at(p["prediction"], path)); });
    };
    measured("FA only", {"T_FA_s", "median"}, us);
    row("FA TFLOPS", [&](const json& p) {
      const json& v = at(p["measured"], {"fa_tflops"});
      return v.is_number() ? fmt::format("{:.0f}", v.get<double>()) : std::string("-"); });
    measured("A2A only", {"T_A2A_s", "median"}, us);
    measured("Serial", {"T_serial_s", "median"}, us);
    measured("Fused", {"T_fused_s", "median"}, us);
    measured("Completion-coupled", {"T_cc_s", "median"}, us);
    measured("FA-only layout", {"fa_only_layout"}, text);
    measured("judged at", {"hiding", "boundary"}, [](const json& v) {
      return v.is_string() ? std::string(v.get<std::string>() == "sender_side" ? "sender" : "completion") : "-"; });
    measured("E_res sender (paired)", {"hiding", "sender_side", "E_res_s"}, us);
    measured("E_res/T_FA sender", {"hiding", "sender_side", "E_res_over_T_FA"}, percent);
    measured("E_res/T_FA sender, cycles", {"sender_side", "clock_normalized", "E_res_over_T_FA"}, percent);
    measured("E_res/T_A2A sender", {"hiding", "sender_side", "E_res_over_T_A2A"}, percent);
    measured("H sender", {"hiding", "sender_side", "H"}, percent);
    measured("E_res completion (paired)", {"E_res_s"}, us);
    measured("E_res/T_FA completion", {"E_res_over_T_FA"}, percent);
    measured("E_res/T_A2A completion", {"hiding", "completion", "E_res_over_T_A2A"}, percent);
    measured("H completion", {"H"}, percent);
    measured("FA idle tail", {"timeline", "fa_only", "tail_idle_fraction"}, percent);
    measured("FA outside Q-loops", {"timeline", "fa_only", "outside_qloop_fraction"}, percent);
    measured("Speedup", {"speedup"}, [](const json& v) {
      return v.is_number() ? fmt::format("{:.3f}x", v.get<double>()) : std::string("-"); });
    row("verified", [&](const json& p) { return std::string(at(p, {"verification", "verified"}) == true ? "yes" : "NO"); });
    for (const auto* p : pts)
      if (p->contains("prediction_note")) {
        fmt::print(out, "  {}\n", (*p)["prediction_note"].get<std::string>());
        break;
      }
    if (!pts.front()->contains("prediction")) continue;
    auto range = [&](const json& v) {
      return v.is_array() && v.size() == 2 ? fmt::format("{}..{}", us(v[0]), us(v[1])) : std::string("-"); };
    predicted("pred. E_res (frozen)", {"E_res_s"}, range);
    predicted("pred. E_res point", {"E_res_point_s"}, us);
    predicted("design test (eq. 10)", {"design_test"}, text);
    row("  vs measurement", [&](const json& p) { return text(at(p, {"judgement", "model", "result"})); });
    row("  zero predictor", [&](const json& p) { return text(at(p, {"judgement", "trivial", "zero", "result"})); });
    for (const auto* p : pts)
      if (at(*p, {"agreement"}).is_string())
        fmt::print(out, "  M={}: {}\n", (*p)["spec"]["M"].get<int>(), (*p)["agreement"].get<std::string>());
  }
}

}  // namespace xs::attention
