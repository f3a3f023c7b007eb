// xstage report layer: JSON form of one point (spec, summaries, verification, prediction) and its strict
// reader. Key names are the schema of docs/result-schema.md; change them only with a schema version bump.
#include <fmt/format.h>

#include <array>
#include <climits>
#include <cstdlib>
#include <iterator>

#include "xs/common/error.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

namespace xs::report {
using nlohmann::json;

namespace {

// "local", "host", "sim", "peer:N", "nccl:N" (N a device or rank index).
bool is_valid_target(const std::string& target) {
  if (target == "local" || target == "host" || target == "sim") return true;
  for (const char* prefix : {"peer:", "nccl:"}) {
    const std::string p = prefix;
    if (target.rfind(p, 0) != 0) continue;
    const std::string index = target.substr(p.size());
    if (index.empty() || index.size() > 4) return false;
    for (char c : index) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  }
  return false;
}

// Runs an enum parser (which names only its own field) and re-labels its error with the full path.
template <typename Parse>
auto parse_at(const std::string& path, const json& j, Parse parse) {
  const std::string text = read_string(j, path);
  try {
    return parse(text);
  } catch (const Error& e) {
    throw input_error(path, bare_message(e));
  }
}

json prediction_to_json(const Prediction& p) {
  return {{"issue_time_s", p.issue_time_s}, {"period_s", p.period_s}, {"drain_horizon_s", p.drain_horizon_s}};
}

Prediction prediction_from_json(const json& j, const std::string& path) {
  const ObjectReader r(j, path, {"issue_time_s", "period_s", "drain_horizon_s"});
  Prediction p;
  p.issue_time_s = read_non_negative(r.required("issue_time_s"), r.path("issue_time_s"));
  p.period_s = read_non_negative(r.required("period_s"), r.path("period_s"));
  p.drain_horizon_s = read_non_negative(r.required("drain_horizon_s"), r.path("drain_horizon_s"));
  return p;
}

Verification verification_from_json(const json& j, const std::string& path) {
  const ObjectReader r(j, path, {"checked", "bytes_checked", "wrong"});
  Verification v;
  v.checked = read_bool(r.required("checked"), r.path("checked"));
  v.bytes_checked = read_unsigned(r.required("bytes_checked"), r.path("bytes_checked"));
  v.wrong = read_unsigned(r.required("wrong"), r.path("wrong"));
  return v;
}

// The injection knobs are written only for epilogue points, so paced points keep their keys (point_key,
// --resume journals and gate matching of files written before the mode existed).
json loaded_knobs_to_json(const LoadedKnobs& k) {
  json j = {{"mainloop", mainloop_name(k.mainloop)}, {"working_set", working_set_name(k.working_set)},
            {"tiles_per_cta", k.tiles_per_cta}, {"warmup_tiles", k.warmup_tiles}, {"k_elems", k.k_elems}};
  if (k.injection != Injection::kPaced) {
    j["injection"] = injection_name(k.injection);
    j["tiles_per_burst"] = k.tiles_per_burst;
  }
  return j;
}

LoadedKnobs loaded_knobs_from_json(const json& j, const std::string& path) {
  const ObjectReader r(j, path, {"mainloop", "working_set", "tiles_per_cta", "warmup_tiles", "k_elems", "injection",
                                 "tiles_per_burst"});
  LoadedKnobs k;
  k.mainloop = parse_at(r.path("mainloop"), r.required("mainloop"), parse_mainloop);
  k.working_set = parse_at(r.path("working_set"), r.required("working_set"), parse_working_set);
  k.tiles_per_cta = static_cast<int>(read_integer(r.required("tiles_per_cta"), r.path("tiles_per_cta"), 1, INT_MAX));
  k.warmup_tiles = static_cast<int>(read_integer(r.required("warmup_tiles"), r.path("warmup_tiles"), 0, INT_MAX));
  k.k_elems = static_cast<int>(read_integer(r.required("k_elems"), r.path("k_elems"), 1, INT_MAX));
  if (const json* v = r.optional("injection")) k.injection = parse_at(r.path("injection"), *v, parse_injection);
  if (const json* v = r.optional("tiles_per_burst"))
    k.tiles_per_burst = static_cast<int>(read_integer(*v, r.path("tiles_per_burst"), 1, INT_MAX));
  if (k.injection == Injection::kPaced && k.tiles_per_burst != 1)
    throw input_error(r.path("tiles_per_burst"), "only injection \"epilogue\" has tiles_per_burst");
  return k;
}

constexpr const char* kLoadedSummaries[] = {"tile_time_s",    "baseline_tile_time_s", "slowdown",
                                            "bytes_issued",   "issue_rate_Bps",       "mainloop_span_s",
                                            "store_span_s",   "drain_tail_s"};

constexpr const char* kEpilogueSummaries[] = {"epilogue_time_s", "mean_tile_time_s", "mean_tile_epilogue_time_s",
                                              "baseline_mean_tile_time_s", "median_slowdown"};
std::array<Summary*, 5> epilogue_fields(LoadedMeasurement::Epilogue& e) {
  return {&e.epilogue_time_s, &e.mean_tile_time_s, &e.mean_tile_epilogue_time_s, &e.baseline_mean_tile_time_s,
          &e.median_slowdown};
}

json loaded_to_json(const LoadedMeasurement& m) {
  json j = {{"tile_time_s", to_json(m.tile_time_s)},
            {"baseline_tile_time_s", to_json(m.baseline_tile_time_s)},
            {"slowdown", to_json(m.slowdown)},
            {"bytes_issued", to_json(m.bytes_issued)},
            {"issue_rate_Bps", to_json(m.issue_rate_bps)},
            {"mainloop_span_s", to_json(m.mainloop_span_s)},
            {"store_span_s", to_json(m.store_span_s)},
            {"drain_tail_s", to_json(m.drain_tail_s)},
            {"baseline_sm_clock_hz", m.baseline_sm_clock_hz}};
  if (m.epilogue) {
    LoadedMeasurement::Epilogue e = *m.epilogue;
    const auto fields = epilogue_fields(e);
    json je = json::object();
    for (std::size_t i = 0; i < fields.size(); ++i) je[kEpilogueSummaries[i]] = to_json(*fields[i]);
    j["epilogue"] = je;
  }
  return j;
}

LoadedMeasurement loaded_from_json(const json& j, const std::string& path) {
  const ObjectReader r(j, path,
                       {"tile_time_s", "baseline_tile_time_s", "slowdown", "bytes_issued", "issue_rate_Bps",
                        "mainloop_span_s", "store_span_s", "drain_tail_s", "baseline_sm_clock_hz", "epilogue"});
  LoadedMeasurement m;
  Summary* fields[] = {&m.tile_time_s,    &m.baseline_tile_time_s, &m.slowdown,     &m.bytes_issued,
                       &m.issue_rate_bps, &m.mainloop_span_s,      &m.store_span_s, &m.drain_tail_s};
  for (std::size_t i = 0; i < std::size(fields); ++i)
    *fields[i] = summary_from_json(r.required(kLoadedSummaries[i]), r.path(kLoadedSummaries[i]));
  m.baseline_sm_clock_hz = read_non_negative(r.required("baseline_sm_clock_hz"), r.path("baseline_sm_clock_hz"));
  // Optional: files written before the epilogue mode, and paced points, have no "epilogue".
  if (const json* je = r.optional("epilogue")) {
    const std::string epath = r.path("epilogue");
    const ObjectReader re(*je, epath, {"epilogue_time_s", "mean_tile_time_s", "mean_tile_epilogue_time_s", "baseline_mean_tile_time_s",
                                             "median_slowdown"});
    LoadedMeasurement::Epilogue e;
    const auto efields = epilogue_fields(e);
    for (std::size_t i = 0; i < efields.size(); ++i)
      *efields[i] = summary_from_json(re.required(kEpilogueSummaries[i]), re.path(kEpilogueSummaries[i]));
    m.epilogue = e;
  }
  return m;
}

}  // namespace

json to_json(const PointSpec& s) {
  json j = {{"suite", suite_name(s.suite)},
          {"target", s.target},
          {"K", s.num_producers},
          {"B_bytes", s.bytes_per_producer},
          {"G_s", s.gap_s},
          {"num_bursts", s.num_bursts},
          {"warmup_bursts", s.warmup_bursts},
          {"repetitions", s.repetitions},
          {"store_width_bytes", s.store_width_bytes},
          {"threads_per_producer", s.threads_per_producer},
          {"producer", producer_kind_name(s.producer_kind)},
          {"address_mode", address_mode_name(s.address_mode)},
          {"completion", s.completion}};
  // Only where it means something, so the keys (point_key) of the other modes stay as they were.
  if (s.address_mode == AddressMode::kScattered) j["scatter_seed"] = s.scatter_seed;
  if (s.suite == Suite::kLoaded) j["loaded"] = loaded_knobs_to_json(s.loaded);
  return j;
}

json to_json(const Summary& s) {
  return {{"median", s.median}, {"p10", s.p10}, {"p90", s.p90}, {"min", s.min}, {"max", s.max},
          {"samples", s.samples}};
}

json to_json(const PointRecord& rec) {
  json j = {{"id", rec.id},
            {"spec", to_json(rec.spec)},
            {"skipped", rec.skipped},
            {"skip_reason", rec.skip_reason},
            {"issue_time_s", to_json(rec.issue_time_s)},
            {"period_s", to_json(rec.period_s)},
            {"sm_clock_hz", rec.sm_clock_hz},
            {"clock_flagged", rec.clock_flagged},
            {"verification",
             {{"checked", rec.verification.checked},
              {"bytes_checked", rec.verification.bytes_checked},
              {"wrong", rec.verification.wrong}}}};
  if (rec.completion_s) j["completion_s"] = to_json(*rec.completion_s);
  if (rec.issue_time_max_s) j["issue_time_max_s"] = to_json(*rec.issue_time_max_s);
  if (rec.prediction) j["prediction"] = prediction_to_json(*rec.prediction);
  if (rec.loaded) j["loaded"] = loaded_to_json(*rec.loaded);
  // The writer refuses whatever the strict reader would refuse (NaN, B = 0, K = 0, ...), so every file
  // xstage writes reads back; reading the fresh object is the one definition of "valid".
  record_from_json(j, "");
  return j;
}

PointSpec spec_from_json(const json& j, const std::string& path) {
  const ObjectReader r(j, path,
                       {"suite", "target", "K", "B_bytes", "G_s", "num_bursts", "warmup_bursts", "repetitions",
                        "store_width_bytes", "threads_per_producer", "producer", "address_mode", "completion",
                        "scatter_seed", "loaded"});
  PointSpec s;
  s.suite = parse_at(r.path("suite"), r.required("suite"), parse_suite);
  s.target = read_string(r.required("target"), r.path("target"));
  if (!is_valid_target(s.target)) {
    throw input_error(r.path("target"), "unknown target \"" + s.target +
                                            "\"; accepted: local, host, sim, peer:N, nccl:N");
  }
  s.num_producers = static_cast<int>(read_integer(r.required("K"), r.path("K"), 1, INT_MAX));
  s.bytes_per_producer = read_unsigned(r.required("B_bytes"), r.path("B_bytes"));
  if (s.bytes_per_producer == 0 || s.bytes_per_producer % 16 != 0) {
    // 16 B is the widest store (st.global.v4); every store width divides it, so this also covers 4 and 8.
    throw input_error(r.path("B_bytes"), fmt::format("expected a positive multiple of 16 bytes, got {}",
                                                     s.bytes_per_producer));
  }
  s.gap_s = read_non_negative(r.required("G_s"), r.path("G_s"));
  s.num_bursts = static_cast<int>(read_integer(r.required("num_bursts"), r.path("num_bursts"), 1, INT_MAX));
  s.warmup_bursts =
      static_cast<int>(read_integer(r.required("warmup_bursts"), r.path("warmup_bursts"), 0, INT_MAX));
  s.repetitions = static_cast<int>(read_integer(r.required("repetitions"), r.path("repetitions"), 1, INT_MAX));
  s.store_width_bytes =
      static_cast<int>(read_integer(r.required("store_width_bytes"), r.path("store_width_bytes"), 4, 16));
  if (s.store_width_bytes != 4 && s.store_width_bytes != 8 && s.store_width_bytes != 16) {
    throw input_error(r.path("store_width_bytes"), fmt::format("expected 4, 8 or 16, got {}", s.store_width_bytes));
  }
  // 1024 threads is the CUDA per-block limit; a producer is at most one block.
  s.threads_per_producer = static_cast<int>(
      read_integer(r.required("threads_per_producer"), r.path("threads_per_producer"), 1, 1024));
  s.producer_kind = parse_at(r.path("producer"), r.required("producer"), parse_producer_kind);
  s.address_mode = parse_at(r.path("address_mode"), r.required("address_mode"), parse_address_mode);
  s.completion = read_bool(r.required("completion"), r.path("completion"));
  if (const json* seed = r.optional("scatter_seed")) {
    if (s.address_mode != AddressMode::kScattered)
      throw input_error(r.path("scatter_seed"), "only address_mode scattered has a row permutation seed");
    s.scatter_seed = static_cast<std::uint32_t>(read_integer(*seed, r.path("scatter_seed"), 0, 0xffffffffLL));
  }
  const json* knobs = r.optional("loaded");
  if ((knobs != nullptr) != (s.suite == Suite::kLoaded))
    throw input_error(r.path("loaded"), "suite loaded, and only it, has the loaded knobs");
  if (knobs) s.loaded = loaded_knobs_from_json(*knobs, r.path("loaded"));
  return s;
}

Summary summary_from_json(const json& j, const std::string& path) {
  const ObjectReader r(j, path, {"median", "p10", "p90", "min", "max", "samples"});
  Summary s;
  s.median = read_non_negative(r.required("median"), r.path("median"));
  s.p10 = read_non_negative(r.required("p10"), r.path("p10"));
  s.p90 = read_non_negative(r.required("p90"), r.path("p90"));
  s.min = read_non_negative(r.required("min"), r.path("min"));
  s.max = read_non_negative(r.required("max"), r.path("max"));
  const json& samples = read_array(r.required("samples"), r.path("samples"));
  s.samples.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    s.samples.push_back(read_non_negative(samples[i], index_path(r.path("samples"), i)));
  }
  return s;
}

PointRecord record_from_json(const json& j, const std::string& path) {
  const ObjectReader r(j, path,
                       {"id", "spec", "skipped", "skip_reason", "issue_time_s", "issue_time_max_s", "period_s", "completion_s",
                        "sm_clock_hz", "clock_flagged", "verification", "prediction", "loaded"});
  PointRecord rec;
  rec.id = read_string(r.required("id"), r.path("id"));
  if (rec.id.empty()) throw input_error(r.path("id"), "expected a dotted id such as remote_store.periodic.host");
  rec.spec = spec_from_json(r.required("spec"), r.path("spec"));
  rec.skipped = read_bool(r.required("skipped"), r.path("skipped"));
  rec.skip_reason = read_string(r.required("skip_reason"), r.path("skip_reason"));
  if (rec.skipped && rec.skip_reason.empty()) {
    throw input_error(r.path("skip_reason"), "a skipped point needs its reason (non-empty string)");
  }
  rec.issue_time_s = summary_from_json(r.required("issue_time_s"), r.path("issue_time_s"));
  rec.period_s = summary_from_json(r.required("period_s"), r.path("period_s"));
  // Optional sections: absent or null both mean "not measured" / "no prediction".
  if (const json* m = r.optional("issue_time_max_s"); m && !m->is_null())
    rec.issue_time_max_s = summary_from_json(*m, r.path("issue_time_max_s"));
  if (const json* c = r.optional("completion_s"); c && !c->is_null()) {
    rec.completion_s = summary_from_json(*c, r.path("completion_s"));
  }
  rec.sm_clock_hz = read_non_negative(r.required("sm_clock_hz"), r.path("sm_clock_hz"));
  rec.clock_flagged = read_bool(r.required("clock_flagged"), r.path("clock_flagged"));
  rec.verification = verification_from_json(r.required("verification"), r.path("verification"));
  if (const json* p = r.optional("prediction"); p && !p->is_null()) {
    rec.prediction = prediction_from_json(*p, r.path("prediction"));
  }
  if (const json* l = r.optional("loaded"); l && !l->is_null()) rec.loaded = loaded_from_json(*l, r.path("loaded"));
  return rec;
}

}  // namespace xs::report
