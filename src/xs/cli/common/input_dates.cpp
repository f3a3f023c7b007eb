// xstage cli layer: see input_dates.hpp.
#include "xs/cli/common/input_dates.hpp"

#include <ctime>
#include <optional>

#include "xs/report/measured_device.hpp"
#include "xs/report/utc_instant.hpp"

namespace xs::cli {
namespace {

std::string date_of(const nlohmann::json& doc) {
  return doc.is_object() && doc.contains("meta") && doc["meta"].is_object() && doc["meta"].contains("date_utc") &&
                 doc["meta"]["date_utc"].is_string()
             ? doc["meta"]["date_utc"].get<std::string>()
             : std::string();
}

// The first GPU a file's meta names ("simulator" for the simulator backend; "" where it names none: a rates file).
std::string device_of(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("meta") || !doc["meta"].is_object()) return "";
  const nlohmann::json& m = doc["meta"];
  if (m.contains("backend") && m["backend"] == "sim") return "simulator";
  if (m.contains("devices") && m["devices"].is_array() && !m["devices"].empty() && m["devices"][0].is_object())
    return m["devices"][0].value("name", std::string());
  return "";
}

// A refit (xstage-calibrate --refit) keeps its measurement's meta.date_utc but was fitted later: the date of the
// fit (meta.refit.date_utc, written since 2026-12-07; "" where the file does not record it).
bool is_refit(const nlohmann::json& doc) {
  return doc.is_object() && doc.contains("meta") && doc["meta"].is_object() && doc["meta"].contains("refit");
}
std::string refit_date_of(const nlohmann::json& doc) {
  if (!is_refit(doc)) return "";
  const nlohmann::json& r = doc["meta"]["refit"];
  return r.is_object() && r.contains("date_utc") && r["date_utc"].is_string() ? r["date_utc"].get<std::string>() : "";
}

}  // namespace

nlohmann::json input_dates(const std::vector<nlohmann::json>& judged_docs,
                           const std::vector<std::pair<std::string, nlohmann::json>>& inputs) {
  const double now_s = static_cast<double>(std::time(nullptr));
  // A judged file without a readable date could be the earliest: then nothing is known to predate the data.
  std::optional<double> earliest;
  std::string earliest_text;
  bool every_judged_dated = !judged_docs.empty();
  for (const nlohmann::json& doc : judged_docs) {
    const std::string d = date_of(doc);
    const std::optional<double> t = report::parse_record_instant(d, now_s);
    every_judged_dated = every_judged_dated && t.has_value();
    if (t && (!earliest || *t < *earliest)) {
      earliest = t;
      earliest_text = d;
    }
  }
  if (!every_judged_dated) earliest.reset();
  // The judged files' device: "" where none names one; "mixed" where they name several.
  std::string data_device;
  for (const nlohmann::json& doc : judged_docs)
    if (const std::string d = device_of(doc); !d.empty())
      data_device = data_device.empty() || report::device_key(data_device) == report::device_key(d) ? d : "mixed";
  nlohmann::json out = {{"earliest_judged_result_utc", earliest ? nlohmann::json(earliest_text) : nlohmann::json()},
                        {"judged_device", data_device}};
  bool all = earliest.has_value();
  for (const auto& [name, doc] : inputs) {
    const std::string d = date_of(doc);
    const std::optional<double> t = report::parse_record_instant(d, now_s);
    bool before = t && earliest && *t < *earliest;
    out[name] = {{"date_utc", t ? nlohmann::json(d) : nlohmann::json()}};
    if (is_refit(doc)) {
      // Its parameters exist only since the fit: it predates the data where the fit does too (unknown: not).
      const std::string fd = refit_date_of(doc);
      std::optional<double> ft = report::parse_record_instant(fd, now_s);
      if (ft && t && *ft < *t) ft.reset();  // a fit before its own measurement: not a date to trust
      before = before && ft && *ft < *earliest;
      out[name]["refit_date_utc"] = ft ? nlohmann::json(fd) : nlohmann::json();
    }
    all = all && before;
    out[name]["predates_data"] = before;
    // Another GPU than the judged files' (both named; the simulator is never the judged GPU): the input describes
    // another machine. An input naming none beside data that name one is not known to be the same.
    const std::string dev = device_of(doc);
    if (!dev.empty()) out[name]["device"] = dev;
    if (!dev.empty() || !data_device.empty())
      out[name]["same_device_as_data"] =
          !dev.empty() && data_device != "mixed" &&
          (data_device.empty() ? dev != "simulator" : report::device_key(dev) == report::device_key(data_device));
  }
  out["every_input_predates_data"] = all;
  bool same = true;
  for (const auto& [name, doc] : inputs) same = same && out[name].value("same_device_as_data", true);
  out["every_input_from_the_judged_device"] = same;
  return out;
}

std::string input_dates_note(const nlohmann::json& dates) {
  std::string other;
  for (const auto& [name, v] : dates.items())
    if (v.is_object() && !v.value("same_device_as_data", true))
      other += (other.empty() ? "" : ", ") + name + " (" + v.value("device", std::string("no device named")) + ")";
  const std::string device_note =
      other.empty() ? "" : "measured on another GPU than the judged files' (or on none named; judged: " +
                               dates.value("judged_device", std::string("none named")) + "): " + other;
  if (dates.value("every_input_predates_data", false)) return device_note;
  std::string late;
  for (const auto& [name, v] : dates.items())
    if (v.is_object() && !v.value("predates_data", false)) late += (late.empty() ? "" : ", ") + name;
  const nlohmann::json& e = dates["earliest_judged_result_utc"];
  return "not every input was measured before the earliest judged result file (" +
         (e.is_string() ? e.get<std::string>() : std::string("date unknown")) + "): " + late +
         "; the score is in-sample for them (meta.dates)" + (device_note.empty() ? "" : "; " + device_note);
}

}  // namespace xs::cli
