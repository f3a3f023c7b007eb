// xstage attention host layer: an fa_a2a result-file point read back (see fa_result_reader.hpp). Where each
// value lives is fixed by its writers: fa_app_point.cpp (axes, variants, paired, verification) and
// fa_report.cpp fa_point_json (extra.measured). Medians and quantiles come from extra.measured, which keeps
// the runner's own values; samples from variants / paired, which are the only place that keeps them.
#include "xs/attention/io/fa_result_reader.hpp"

#include <climits>
#include <string>

#include "xs/attention/point/fa_app_point.hpp"
#include "xs/common/error.hpp"
#include "xs/report/json_read.hpp"

namespace xs::attention {
namespace {

using nlohmann::json;
using report::join_path;

const json& member(const json& obj, const std::string& path, const char* key) {
  if (!obj.is_object())
    throw input_error(path.empty() ? "point" : path,
                      std::string("expected an object, got ") + report::json_type_name(obj));
  const auto it = obj.find(key);
  if (it == obj.end())
    throw input_error(join_path(path, key), "missing; every fa_a2a point written by xstage-bench fa_a2a has it");
  return *it;
}
const json* optional_member(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

double number(const json& obj, const std::string& path, const char* key) {
  return report::read_finite(member(obj, path, key), join_path(path, key));
}
int integer(const json& obj, const std::string& path, const char* key) {
  return static_cast<int>(report::read_integer(member(obj, path, key), join_path(path, key), INT_MIN, INT_MAX));
}
std::string text(const json& obj, const std::string& path, const char* key) {
  return report::read_string(member(obj, path, key), join_path(path, key));
}

// {median, p10, p90} at obj[key]; the samples of the same quantity from `samples_from` (variants.<name> or
// paired.<name>) where the point keeps them.
Summary stats(const json& obj, const std::string& path, const char* key, const json* samples_from = nullptr,
                const std::string& samples_path = "") {
  const std::string at = join_path(path, key);
  const json& s = member(obj, path, key);
  Summary t;
  t.median = number(s, at, "median");
  t.p10 = number(s, at, "p10");
  t.p90 = number(s, at, "p90");
  if (samples_from != nullptr) {
    const std::string samples_at = join_path(samples_path, "samples");
    const json& samples = report::read_array(member(*samples_from, samples_path, "samples"), samples_at);
    for (std::size_t i = 0; i < samples.size(); ++i)
      t.samples.push_back(report::read_finite(samples[i], report::index_path(samples_at, i)));
  }
  return t;
}

// Where `section` ("variants" / "paired") of the point holds `name`: its summary, else nullptr.
const json* summary_of(const json& point, const char* section, const char* name) {
  const json* s = optional_member(point, section);
  return s != nullptr && s->is_object() ? optional_member(*s, name) : nullptr;
}

void check_suite(const json& point) {
  const std::string suite = text(point, "", "suite");
  if (suite != kFaSuiteId) throw input_error("suite", "expected fa_a2a, got \"" + suite + "\"");
}

}  // namespace

FaA2aPointSpec fa_point_spec_from_json(const json& point) {
  check_suite(point);
  const json& axes = member(point, "", "axes");
  FaA2aPointSpec s;
  s.seq_len = integer(axes, "axes", "M");
  s.num_heads = integer(axes, "axes", "heads");
  s.head_dim = integer(axes, "axes", "head_dim");
  s.num_ranks = integer(axes, "axes", "P");
  s.target = text(axes, "axes", "target");
  s.num_ctas = integer(axes, "axes", "num_ctas");
  s.launches_per_graph = integer(axes, "axes", "launches_per_graph");
  s.repetitions = integer(axes, "axes", "repetitions");
  s.verify = report::read_bool(member(axes, "axes", "verify"), "axes.verify");
  if (optional_member(axes, "device") != nullptr) s.device = integer(axes, "axes", "device");  // several ranks: none
  s.knobs = axes.get<FaKnobs>();  // absent keys: what every earlier point ran
  return s;
}

FaA2aPointResult fa_point_result_from_json(const json& point) {
  check_suite(point);
  FaA2aPointResult r;
  r.status = text(point, "", "status");
  r.reason = text(point, "", "reason");
  if (r.status == "skipped") return r;  // nothing ran: fa_point_json writes no measured section
  const json& extra = member(point, "", "extra");
  const std::string at = "extra.measured";
  const json& m = member(extra, "extra", "measured");
  // One measured time: its stats in `m` (or m.sender_side) and its samples in variants/paired, if kept.
  auto timed = [&](const json& obj, const std::string& path, const char* key, const char* section, const char* name) {
    const json* kept = summary_of(point, section, name);
    return stats(obj, path, key, kept, join_path(section, name));
  };
  r.t_fa = timed(m, at, "T_FA_s", "variants", "fa");
  r.t_a2a = timed(m, at, "T_A2A_s", "variants", "a2a");
  r.t_a2a_bulk = timed(m, at, "T_A2A_bulk_s", "variants", "a2a_bulk");
  r.t_serial = timed(m, at, "T_serial_s", "variants", "serial");
  r.t_fused = timed(m, at, "T_fused_s", "variants", "fused");
  r.t_cc = timed(m, at, "T_cc_s", "variants", "completion_coupled");
  r.e_res_paired = timed(m, at, "E_res_paired_s", "paired", "fused_minus_fa");
  r.e_cc_paired = timed(m, at, "E_cc_paired_s", "paired", "completion_coupled_minus_fa");
  if (const json* ss = optional_member(m, "sender_side")) {  // written only where the sender side was measured
    const std::string sp = join_path(at, "sender_side");
    r.sender_fa = timed(*ss, sp, "T_FA_s", "variants", "fa_sender_side");
    r.sender_fused = timed(*ss, sp, "T_fused_s", "variants", "fused_sender_side");
    r.sender_serial = timed(*ss, sp, "T_serial_s", "variants", "serial_sender_side");
    r.sender_cc = timed(*ss, sp, "T_cc_s", "variants", "completion_coupled_sender_side");
    r.e_res_sender_paired = timed(*ss, sp, "E_res_paired_s", "paired", "fused_minus_fa_sender_side");
    r.e_cc_sender_paired = timed(*ss, sp, "E_cc_paired_s", "paired", "completion_coupled_minus_fa_sender_side");
    // The rounds' sigmas in cycles and the FA-only rounds' clock (the prediction's sigmas; in files
    // after commit f385b4c); older files lack both and the prediction falls back to the lone launches'.
    if (const json* cn = optional_member(*ss, "clock_normalized")) {
      const std::string cp = join_path(sp, "clock_normalized");
      r.clock_fa_hz = stats(*cn, cp, "clock_fa_hz");
      r.clock_fused_hz = stats(*cn, cp, "clock_fused_hz");
      // The clock-normalized E_res band (summaries only), which the critical-path check judges against.
      r.e_res_sender_cycles_paired = stats(*cn, cp, "E_res_paired_s");
      r.sender_fa_cycles = stats(*cn, cp, "T_FA_s");
    }
    if (const json* cp = optional_member(*ss, "critical_path")) {  // files after the 2026-12-02 sixth session
      const std::string path = join_path(sp, "critical_path");
      r.critical_qloop_paired = stats(*cp, path, "qloop_paired_s");
      r.critical_epilogue_paired = stats(*cp, path, "epilogue_paired_s");
      r.critical_other_paired = stats(*cp, path, "other_paired_s");
    }
    if (const json* sr = optional_member(*ss, "sigma_rounds")) {
      const std::string rp = join_path(sp, "sigma_rounds");
      r.sigma_rounds_fa_cycles = stats(*sr, rp, "fa_cycles_per_kv_tile");
      r.sigma_rounds_fused_cycles = stats(*sr, rp, "fused_cycles_per_kv_tile");
      // The clock the bench converted them at (written beside them in files after commit c32287c; before, only in
      // clock_normalized, which every such file also has).
      if (optional_member(*sr, "reference_clock_hz") != nullptr)
        r.clock_fa_hz.median = number(*sr, rp, "reference_clock_hz");
    }
  }
  r.num_ctas = integer(m, at, "K");
  r.num_tiles = integer(m, at, "num_tiles");
  r.heads_per_band = optional_member(m, "heads_per_band") ? integer(m, at, "heads_per_band") : 1;  // before: 1
  r.volume_bytes = number(m, at, "volume_bytes");
  r.fa_tflops = number(m, at, "fa_tflops");
  r.sm_clock_hz = number(m, at, "sm_clock_hz");
  if (optional_member(m, "sm_clock_fa_hz") != nullptr) r.sm_clock_fa_hz = number(m, at, "sm_clock_fa_hz");
  r.sigma_s_per_kv_tile = number(m, at, "sigma_s_per_kv_tile");
  r.sigma_fa_s_per_kv_tile = number(m, at, "sigma_fa_s_per_kv_tile");
  r.qloop_fused = stats(m, at, "qloop_s");
  r.store_span_fused = stats(m, at, "store_span_fused_s");
  r.store_span_cc = stats(m, at, "store_span_cc_s");
  r.fence_span_cc = stats(m, at, "fence_span_cc_s");
  r.fa_only_layout = text(m, at, "fa_only_layout");
  r.store_phase_spread_median_s = number(m, at, "store_phase_spread_median_s");
  r.peak_concurrent_storers = number(m, at, "peak_concurrent_storers");
  r.mean_concurrent_storers = number(m, at, "mean_concurrent_storers");
  if (const json* bytes = optional_member(extra, "remote_bytes"))
    r.remote_bytes = report::read_finite(*bytes, "extra.remote_bytes");
  if (const json* where = optional_member(extra, "destinations"))
    r.destinations = report::read_string(*where, "extra.destinations");
  const json& v = member(point, "", "verification");
  r.verified = report::read_bool(member(v, "verification", "passed"), "verification.passed");
  r.error_detail = text(v, "verification", "detail");
  return r;
}

}  // namespace xs::attention
