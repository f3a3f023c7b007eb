// xstage attention host layer: fa_a2a points in the common application-point form (see fa_app_point.hpp).
#include "attention/fa_app_point.hpp"

#include "common/stats.hpp"

namespace xs::attention {
using nlohmann::json;

json fa_canonical_spec(const FaA2aPointSpec& s) {
  return {{"M", s.seq_len}, {"heads", s.num_heads}, {"head_dim", s.head_dim}, {"P", s.num_ranks},
          {"target", s.target}, {"num_ctas", s.num_ctas}, {"launches_per_graph", s.launches_per_graph},
          {"repetitions", s.repetitions}, {"verify", s.verify}};
}

std::string fa_point_id(const FaA2aPointSpec& spec) { return std::string(kFaSuiteId) + "." + spec.target; }

report::AppPoint fa_app_point(const FaA2aPointSpec& spec, const FaA2aPointResult& r, const json& legacy) {
  report::AppPoint p;
  p.id = fa_point_id(spec);
  p.suite = kFaSuiteId;
  p.axes = fa_canonical_spec(spec);
  p.status = r.status;
  p.reason = r.reason;
  if (r.status == "skipped") return p;  // nothing ran: no times, nothing checked
  const std::pair<const char*, const TimeStats*> variants[] = {
      {"fa", &r.t_fa}, {"a2a", &r.t_a2a}, {"a2a_bulk", &r.t_a2a_bulk}, {"serial", &r.t_serial},
      {"fused", &r.t_fused}, {"completion_coupled", &r.t_cc}, {"fa_heads_major", &r.t_fa_heads_major}};
  for (const auto& [name, t] : variants)
    if (!t->samples_s.empty()) p.variants[name] = summarize(t->samples_s);
  if (!r.e_res_paired.samples_s.empty()) p.paired["fused_minus_fa"] = summarize(r.e_res_paired.samples_s);
  if (!r.e_cc_paired.samples_s.empty()) p.paired["completion_coupled_minus_fa"] = summarize(r.e_cc_paired.samples_s);
  p.verification.checked = spec.verify;
  p.verification.passed = r.verified;
  p.verification.detail = r.error_detail;
  if (auto v = legacy.find("verification"); v != legacy.end()) {
    p.verification.values = *v;
    p.verification.values.erase("verified");
    p.verification.values.erase("detail");
  }
  if (auto pred = legacy.find("prediction"); pred != legacy.end()) p.prediction = *pred;
  for (const char* key : {"measured", "agreement", "prediction_note"})
    if (auto it = legacy.find(key); it != legacy.end()) p.extra[key] = *it;
  p.extra["fa_only_layout"] = r.fa_only_layout;
  return p;
}

json fa_legacy_json(const report::AppPoint& p) {
  json spec = p.axes;
  spec.erase("verify");
  json j = {{"id", p.id}, {"spec", spec}, {"status", p.status}, {"reason", p.reason}};
  if (p.status == "skipped") return j;
  for (const char* key : {"measured", "agreement", "prediction_note"})
    if (auto it = p.extra.find(key); it != p.extra.end()) j[key] = *it;
  json verification = p.verification.values;
  verification["verified"] = p.verification.passed;
  verification["detail"] = p.verification.detail;
  j["verification"] = verification;
  if (!p.prediction.is_null()) j["prediction"] = p.prediction;
  return j;
}

}  // namespace xs::attention
