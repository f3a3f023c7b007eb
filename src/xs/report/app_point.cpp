// xstage report layer: JSON form and strict reader of an application-suite point (see app_point.hpp).
#include "xs/report/app_point.hpp"

#include <fmt/format.h>

#include "xs/common/error.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

namespace xs::report {
using nlohmann::json;

namespace {

bool is_status(const std::string& s) { return s == "ok" || s == "skipped" || s == "failed"; }

// A free-form section: the expected type and finite numbers only.
const json& free_form(const json& j, const std::string& path, bool nullable) {
  if (!(j.is_object() || (nullable && j.is_null())))
    throw input_error(path, fmt::format("expected {}, got {}", nullable ? "an object or null" : "an object",
                                        json_type_name(j)));
  if (auto bad = find_non_finite(j, path)) throw input_error(*bad, "expected a finite number, got NaN or inf");
  return j;
}

// Paired differences may be negative (a variant faster than its reference in that round): finite only.
Summary signed_summary_from_json(const json& j, const std::string& path) {
  const ObjectReader r(j, path, {"median", "p10", "p90", "min", "max", "samples"});
  Summary s;
  s.median = read_finite(r.required("median"), r.path("median"));
  s.p10 = read_finite(r.required("p10"), r.path("p10"));
  s.p90 = read_finite(r.required("p90"), r.path("p90"));
  s.min = read_finite(r.required("min"), r.path("min"));
  s.max = read_finite(r.required("max"), r.path("max"));
  const json& samples = read_array(r.required("samples"), r.path("samples"));
  for (std::size_t i = 0; i < samples.size(); ++i)
    s.samples.push_back(read_finite(samples[i], index_path(r.path("samples"), i)));
  return s;
}

void check_point(const AppPoint& p, const std::string& path) {
  if (p.id.empty()) throw input_error(join_path(path, "id"), "expected a dotted id such as fa_a2a.host");
  if (p.suite.empty()) throw input_error(join_path(path, "suite"), "expected the suite id, e.g. fa_a2a");
  if (!is_status(p.status))
    throw input_error(join_path(path, "status"), fmt::format("expected ok, skipped or failed, got \"{}\"", p.status));
  if (p.status != "ok" && p.reason.empty())
    throw input_error(join_path(path, "reason"), fmt::format("a {} point needs its reason", p.status));
}

}  // namespace

bool failed_verification(const AppPoint& point) {
  if (point.status == "failed") return true;
  return point.status == "ok" && point.verification.checked && !point.verification.passed;
}

json to_json(const AppPoint& p) {
  check_point(p, "");
  json variants = json::object(), paired = json::object();
  for (const auto& [name, s] : p.variants) {
    bool non_negative = s.median >= 0 && s.p10 >= 0 && s.p90 >= 0 && s.min >= 0 && s.max >= 0;
    for (double v : s.samples) non_negative = non_negative && v >= 0;
    if (!non_negative) throw input_error(join_path("variants", name), "expected times >= 0 s");
    variants[name] = to_json(s);
  }
  for (const auto& [name, s] : p.paired) paired[name] = to_json(s);
  json j = {{"id", p.id},
            {"suite", p.suite},
            {"axes", p.axes},
            {"status", p.status},
            {"reason", p.reason},
            {"variants", std::move(variants)},
            {"paired", std::move(paired)},
            {"verification",
             {{"checked", p.verification.checked}, {"passed", p.verification.passed},
              {"detail", p.verification.detail}, {"values", p.verification.values}}},
            {"extra", p.extra}};
  if (!p.prediction.is_null()) j["prediction"] = p.prediction;
  free_form(j["axes"], "axes", false);
  free_form(j["verification"]["values"], "verification.values", false);
  free_form(j["extra"], "extra", false);
  free_form(p.prediction, "prediction", true);
  if (auto bad = find_non_finite(j, "")) throw input_error(*bad, "expected a finite number, got NaN or inf");
  return j;
}

AppPoint app_point_from_json(const json& j, const std::string& path) {
  const ObjectReader r(j, path, {"id", "suite", "axes", "status", "reason", "variants", "paired", "verification",
                                 "prediction", "extra"});
  AppPoint p;
  p.id = read_string(r.required("id"), r.path("id"));
  p.suite = read_string(r.required("suite"), r.path("suite"));
  p.axes = free_form(r.required("axes"), r.path("axes"), false);
  p.status = read_string(r.required("status"), r.path("status"));
  p.reason = read_string(r.required("reason"), r.path("reason"));
  for (const auto& [name, s] : read_object(r.required("variants"), r.path("variants")).items())
    p.variants[name] = summary_from_json(s, join_path(r.path("variants"), name));
  for (const auto& [name, s] : read_object(r.required("paired"), r.path("paired")).items())
    p.paired[name] = signed_summary_from_json(s, join_path(r.path("paired"), name));
  const ObjectReader v(r.required("verification"), r.path("verification"), {"checked", "passed", "detail", "values"});
  p.verification.checked = read_bool(v.required("checked"), v.path("checked"));
  p.verification.passed = read_bool(v.required("passed"), v.path("passed"));
  p.verification.detail = read_string(v.required("detail"), v.path("detail"));
  p.verification.values = free_form(v.required("values"), v.path("values"), false);
  if (const json* pred = r.optional("prediction")) p.prediction = free_form(*pred, r.path("prediction"), true);
  p.extra = free_form(r.required("extra"), r.path("extra"), false);
  check_point(p, path);
  return p;
}

bool is_app_point_json(const json& j) { return j.is_object() && j.contains("axes"); }

std::string app_point_key(const std::string& id, const json& axes) {
  return json::array({id, axes}).dump();
}

}  // namespace xs::report
