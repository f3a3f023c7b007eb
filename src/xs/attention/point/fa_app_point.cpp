// xstage attention host layer: fa_a2a points in the common application-point form (see fa_app_point.hpp).
#include "xs/attention/point/fa_app_point.hpp"

#include <fmt/format.h>

#include "xs/kernels/attention/config.hpp"
#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"

namespace xs::attention {
using nlohmann::json;

void validate_fa_point_spec(const FaA2aPointSpec& s) {
  namespace ka = xs::kernels::attention;
  if (s.seq_len <= 0 || s.seq_len % ka::TileShape::kBlockM != 0)
    throw input_error("--M", "M = " + std::to_string(s.seq_len) + " must be a positive multiple of " +
                                 std::to_string(ka::TileShape::kBlockM));
  if (s.num_heads < 1 || static_cast<long long>(s.num_heads) * s.seq_len >= (1ll << 31))
    throw input_error("--heads", std::to_string(s.num_heads) + " heads at M = " + std::to_string(s.seq_len) +
                                     ": need heads >= 1 and heads * M < 2^31");
  if (!ka::head_dim_is_built(s.head_dim))
    throw input_error("--head-dim", "head dim " + std::to_string(s.head_dim) + " is not built; use 64 or 128");
  if (s.num_ranks < 1 || s.num_ranks > kFaMaxRanks || s.seq_len % s.num_ranks != 0)
    throw input_error("--P", "P = " + std::to_string(s.num_ranks) + " must be in 1.." + std::to_string(kFaMaxRanks) +
                                 " and divide M = " + std::to_string(s.seq_len));
  if (s.device < 0) throw input_error("--device", "GPU index " + std::to_string(s.device) + ": use 0 or more");
  if (s.launches_per_graph < 1) throw input_error("--launches-per-graph", "need at least 1");
  if (s.repetitions < 1) throw input_error("--reps", "need at least 1 repetition");
  if (s.num_ctas < 0) throw input_error("--ctas", "must be >= 0 (0: one per SM)");
  validate_fa_knobs(s.knobs, s.seq_len, s.num_heads, s.num_ctas);
}

Product<StringAxis, IntegerAxis, IntegerAxis> fa_sweep_space(const std::vector<std::string>& targets,
                                                              const std::vector<long long>& heads,
                                                              const std::vector<long long>& seq_lens) {
  return product(StringAxis("--target", targets), IntegerAxis("--heads", heads), IntegerAxis("--M", seq_lens));
}

std::vector<FaA2aPointSpec> fa_sweep_points(const FaA2aPointSpec& prototype, const std::vector<std::string>& targets,
                                            const std::vector<long long>& heads,
                                            const std::vector<long long>& seq_lens) {
  std::vector<FaA2aPointSpec> points;
  for (const auto& [target, h, m] : fa_sweep_space(targets, heads, seq_lens)) {
    if (m <= 0 || m > (1 << 20)) throw input_error("--M", fmt::format("M={} out of range (1..1M)", m));
    if (h <= 0 || h > 1024) throw input_error("--heads", fmt::format("{} heads: accepted 1..1024", h));
    FaA2aPointSpec s = prototype;
    s.seq_len = static_cast<int>(m);
    s.num_heads = static_cast<int>(h);
    s.target = target;
    validate_fa_point_spec(s);
    points.push_back(s);
  }
  return points;
}

json fa_canonical_spec(const FaA2aPointSpec& s) {
  json j = {{"M", s.seq_len}, {"heads", s.num_heads}, {"head_dim", s.head_dim}, {"P", s.num_ranks},
            {"target", s.target}, {"num_ctas", s.num_ctas}, {"launches_per_graph", s.launches_per_graph},
            {"repetitions", s.repetitions}, {"verify", s.verify}, {"device", s.device}};
  // The kernel's knobs only where they differ from what every earlier point ran, so each keeps its key.
  j.update(json(s.knobs));
  return j;
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
  const std::pair<const char*, const Summary*> variants[] = {
      {"fa", &r.t_fa}, {"a2a", &r.t_a2a}, {"a2a_bulk", &r.t_a2a_bulk}, {"serial", &r.t_serial},
      {"fused", &r.t_fused}, {"completion_coupled", &r.t_cc}, {"fa_heads_major", &r.t_fa_heads_major},
      {"fa_alone", &r.t_fa_alone}};
  for (const auto& [name, t] : variants)
    if (!t->samples.empty()) p.variants[name] = summarize(t->samples);
  // The sender-side boundary of the same variants (fa_runner.hpp), "<variant>_sender_side".
  const std::pair<const char*, const Summary*> sender[] = {
      {"fa_sender_side", &r.sender_fa}, {"serial_sender_side", &r.sender_serial},
      {"fused_sender_side", &r.sender_fused}, {"completion_coupled_sender_side", &r.sender_cc}};
  for (const auto& [name, t] : sender)
    if (!t->samples.empty()) p.variants[name] = summarize(t->samples);
  const std::pair<const char*, const Summary*> paired[] = {
      {"fused_minus_fa", &r.e_res_paired}, {"completion_coupled_minus_fa", &r.e_cc_paired},
      {"fused_minus_fa_sender_side", &r.e_res_sender_paired},
      {"completion_coupled_minus_fa_sender_side", &r.e_cc_sender_paired}};
  for (const auto& [name, t] : paired)
    if (!t->samples.empty()) p.paired[name] = summarize(t->samples);
  p.verification.checked = spec.verify;
  p.verification.passed = r.verified;
  p.verification.detail = r.error_detail;
  if (auto v = legacy.find("verification"); v != legacy.end()) {
    p.verification.values = *v;
    p.verification.values.erase("verified");
    p.verification.values.erase("detail");
  }
  if (auto pred = legacy.find("prediction"); pred != legacy.end()) p.prediction = *pred;
  for (const char* key : {"measured", "agreement", "prediction_note", "judgement", "diagnostics"})
    if (auto it = legacy.find(key); it != legacy.end()) p.extra[key] = *it;
  p.extra["fa_only_layout"] = r.fa_only_layout;
  p.extra["remote_bytes"] = r.remote_bytes;
  p.extra["destinations"] = r.destinations;
  p.extra["boundaries"] = {
      {"remote_visible", "variants without suffix: CUDA events around graphs of back-to-back launches; every "
                         "kernel boundary waits for its launch's stores to be performed"},
      {"sender_side", "variants *_sender_side: in-kernel %globaltimer from the first tile start to the last "
                      "store issued, per launch, mean over back-to-back launches with one synchronization "
                      "after them (paper section 5.1); serial adds the A2A copy's event time"}};
  if (!r.sender_fused.samples.empty())
    p.extra["burst_alignment"] = {{"store_phase_spread_median_s", r.store_phase_spread_median_s},
                                  {"peak_concurrent_storers", r.peak_concurrent_storers},
                                  {"mean_concurrent_storers", r.mean_concurrent_storers}};
  return p;
}

json fa_legacy_json(const report::AppPoint& p) {
  json spec = p.axes;
  spec.erase("verify");
  spec.erase("device");  // fa_point_json's spec predates --device (the GPU is in the file's meta)
  json j = {{"id", p.id}, {"spec", spec}, {"status", p.status}, {"reason", p.reason}};
  if (p.status == "skipped") return j;
  for (const char* key : {"measured", "agreement", "prediction_note", "judgement", "diagnostics"})
    if (auto it = p.extra.find(key); it != p.extra.end()) j[key] = *it;
  json verification = p.verification.values;
  verification["verified"] = p.verification.passed;
  verification["detail"] = p.verification.detail;
  j["verification"] = verification;
  if (!p.prediction.is_null()) j["prediction"] = p.prediction;
  return j;
}

}  // namespace xs::attention
