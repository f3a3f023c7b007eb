// xstage moe host layer: the measured megamoe point behind `xstage-predict moe --from-run` (see
// moe_run_point.hpp). Reads only the keys it needs; a key of the wrong type counts as a mismatch.
#include "xs/moe/point/moe_run_point.hpp"

#include <fmt/format.h>

#include <cmath>

#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"

namespace xs::moe {
namespace {

using nlohmann::json;

std::optional<double> number_at(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) return std::nullopt;
  const double x = obj[key].get<double>();
  return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
}
std::string string_at(const json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : std::string();
}
const json& object_at(const json& obj, const char* key) {
  static const json kEmpty = json::object();
  return obj.is_object() && obj.contains(key) && obj[key].is_object() ? obj[key] : kEmpty;
}
bool equals(const json& axes, const char* key, double want) {
  const auto x = number_at(axes, key);
  return x && *x == want;
}

bool shape_matches(const json& axes, const MoeShape& shape) {
  const std::string name = string_at(axes, "shape");
  if (!name.empty() && !shape.name.empty()) return name == shape.name;
  return equals(axes, "hidden", shape.hidden) && equals(axes, "intermediate", shape.intermediate) &&
         equals(axes, "experts", shape.num_experts) && equals(axes, "top_k", shape.top_k);
}

bool required_match(const json& point, const RunPointQuery& q) {
  const json& axes = object_at(point, "axes");
  return string_at(point, "status") == "ok" && string_at(point, "suite") == "megamoe" && shape_matches(axes, q.shape) &&
         string_at(axes, "precision") == q.precision && equals(axes, "K_SM", q.num_sms) &&
         equals(axes, "block_n", q.block_n) && string_at(axes, "target") == q.target;
}

// The preferred axes the point does not match, each as "axis=value (asked want)".
std::vector<std::string> differences(const json& axes, const RunPointQuery& q) {
  std::vector<std::string> out;
  const auto check = [&](const char* key, double want) {
    if (!equals(axes, key, want))
      out.push_back(fmt::format("{}={} (asked {:g})", key, axes.contains(key) ? axes[key].dump() : "absent", want));
  };
  check("T", q.tokens_per_rank);
  check("P", q.num_ranks);
  if (string_at(axes, "routing") != q.routing)
    out.push_back(fmt::format("routing={} (asked {})", string_at(axes, "routing"), q.routing));
  check("zipf_alpha", q.zipf_alpha);
  check("gain", q.gain);
  check("routing_seed", static_cast<double>(q.routing_seed));
  return out;
}

std::string describe(const json& axes) {
  const auto num = [&](const char* key) { return axes.contains(key) ? axes[key].dump() : std::string("?"); };
  return fmt::format("{} {} {} T={} P={} K_SM={} b_n={} target={}", string_at(axes, "shape"),
                     string_at(axes, "precision"), string_at(axes, "routing"), num("T"), num("P"), num("K_SM"),
                     num("block_n"), string_at(axes, "target"));
}

}  // namespace

RunPoint select_run_point(const json& result, const std::string& source, const RunPointQuery& q) {
  if (!(result.is_object() && result.contains("points") && result["points"].is_array()))
    throw input_error("--from-run",
                      source + ": no points[] array (expected a result file of xstage-bench megamoe)");
  const json& points = result["points"];
  std::optional<std::size_t> best;
  std::size_t best_differences = 0;
  std::string held;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const json& axes = object_at(points[i], "axes");
    held += "\n  points[" + std::to_string(i) + "]: " + describe(axes) + " (" + string_at(points[i], "status") + ")";
    if (!required_match(points[i], q)) continue;
    const std::size_t n = differences(axes, q).size();
    if (!best || n < best_differences) best = i, best_differences = n;
  }
  if (!best) {
    // A point that matches but for b_n: say so (b_n 256 became the default for bf16 where it tiles, 2026-12-07;
    // files measured before hold b_n 128).
    std::string hint;
    RunPointQuery other = q;
    other.block_n = q.block_n == 256 ? 128 : 256;
    for (const json& p : points)
      if (required_match(p, other)) {
        hint = fmt::format(" (it holds this point at b_n {}: pass --block-n {}; b_n 256 is the default for bf16 "
                           "where it tiles)", other.block_n, other.block_n);
        break;
      }
    throw input_error("--from-run", fmt::format("{}: no ok megamoe point with shape {}, precision {}, K_SM {}, b_n {}, "
                                                "target {}{}; the file holds:{}",
                                                source,
                                                q.shape.name.empty() ? "(h, I, E, top-k as given)" : q.shape.name,
                                                q.precision, q.num_sms, q.block_n, q.target, hint, held));
  }
  const json& point = points[*best];
  const json& axes = object_at(point, "axes");
  RunPoint r;
  r.source = source + " points[" + std::to_string(*best) + "]";
  r.description = describe(axes);
  r.differences = differences(axes, q);
  r.same_routing = r.differences.empty();
  const json& extra = object_at(point, "extra");
  const json& tiles = object_at(object_at(object_at(extra, "variants"), "expert_wave"), "tiles");
  const auto l1 = number_at(tiles, "l1_mainloop_median_s"), l2 = number_at(tiles, "l2_mainloop_median_s");
  if (!l1 || !l2 || *l1 <= 0 || *l2 <= 0)
    throw input_error("--from-run", r.source + ": no positive extra.variants.expert_wave.tiles.l1/l2_mainloop_median_s "
                                               "(was the point run with instrumentation?)");
  r.l1_mainloop_s = *l1;
  r.l2_mainloop_s = *l2;
  const json& variants = object_at(point, "variants");
  r.wave_median_s = number_at(object_at(variants, "expert_wave"), "median");
  r.interleaved_median_s = number_at(object_at(variants, "interleaved"), "median");
  r.received_pairs = number_at(extra, "received_pairs");
  r.remote_pairs = number_at(extra, "remote_pairs");
  return r;
}

RunPoint load_run_point(const std::string& path, const RunPointQuery& query) {
  return select_run_point(report::parse_json_text(report::read_text_file(path), path), path, query);
}

}  // namespace xs::moe
