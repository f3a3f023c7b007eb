// xstage moe point: a megamoe point's spec as its result-file axes (see moe_point_json.hpp).
#include "xs/moe/point/moe_point_json.hpp"

#include <cmath>
#include <optional>
#include <vector>

#include "xs/common/error.hpp"

namespace xs::moe {
using nlohmann::json;

void to_json(json& j, const MoePointSpec& s) {
  j = {{"shape", s.shape.name}, {"hidden", s.shape.hidden}, {"intermediate", s.shape.intermediate},
       {"experts", s.shape.num_experts}, {"top_k", s.shape.top_k}, {"precision", s.precision},
       {"routing", s.routing}, {"zipf_alpha", s.zipf_alpha}, {"gain", s.gain}, {"routing_seed", s.routing_seed},
       {"T", s.tokens_per_rank}, {"P", s.num_ranks}, {"K_SM", s.num_ctas}, {"block_n", s.block_n},
       {"target", s.target}, {"D", s.lead_rows}, {"experts_per_wave", s.experts_per_wave},
       {"overlap_waves", s.overlap_waves}, {"launches_per_graph", s.launches_per_graph},
       {"repetitions", s.repetitions}, {"verify", s.verify}, {"verify_rotation", s.verify_rotation},
       {"cooperative_launch", s.cooperative_launch}, {"instrument", s.instrument},
       {"variants", s.variants.empty() ? moe_variant_names() : s.variants}};
}

void from_json(const json& ax, MoePointSpec& s) {
  const auto at = [&](const char* key) -> const json* {
    if (!ax.is_object()) return nullptr;
    const auto it = ax.find(key);
    return it == ax.end() ? nullptr : &*it;
  };
  const auto number = [&](const char* key) -> std::optional<double> {
    const json* v = at(key);
    if (v == nullptr || !v->is_number()) return std::nullopt;
    const double x = v->get<double>();
    return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
  };
  const auto need = [&](const char* key) {
    const auto v = number(key);
    if (!v) throw input_error(std::string("axes.") + key, "missing or not a number");
    return *v;
  };
  const auto text = [&](const char* key) {
    const json* v = at(key);
    if (v == nullptr || !v->is_string()) throw input_error(std::string("axes.") + key, "missing or not a string");
    return v->get<std::string>();
  };
  s.shape.name = text("shape");
  s.shape.hidden = static_cast<int>(need("hidden"));
  s.shape.intermediate = static_cast<int>(need("intermediate"));
  s.shape.num_experts = static_cast<int>(need("experts"));
  s.shape.top_k = static_cast<int>(need("top_k"));
  s.precision = text("precision");
  s.tokens_per_rank = static_cast<int>(need("T"));
  s.num_ranks = static_cast<int>(need("P"));
  s.num_ctas = static_cast<int>(need("K_SM"));
  s.block_n = static_cast<int>(need("block_n"));
  s.routing = text("routing");
  s.zipf_alpha = need("zipf_alpha");
  s.gain = need("gain");
  s.routing_seed = static_cast<std::uint64_t>(need("routing_seed"));
  s.target = text("target");
  // The run's knobs, where the file has them.
  const auto optional = [&](const char* key, auto& out) {
    const json* v = at(key);
    if (v == nullptr) return;
    try {
      v->get_to(out);
    } catch (const json::exception&) {
      throw input_error(std::string("axes.") + key, "not of the type the writer writes");
    }
  };
  optional("D", s.lead_rows);
  if (const json* widths = at("experts_per_wave"); widths != nullptr && widths->is_number_integer()) {
    const int width = widths->get<int>();  // files before the widths were swept: one width, 0 = none given
    s.experts_per_wave = width > 0 ? std::vector<int>{width} : std::vector<int>{};
  } else {
    optional("experts_per_wave", s.experts_per_wave);
  }
  optional("overlap_waves", s.overlap_waves);
  optional("launches_per_graph", s.launches_per_graph);
  optional("repetitions", s.repetitions);
  optional("verify", s.verify);
  optional("verify_rotation", s.verify_rotation);
  optional("cooperative_launch", s.cooperative_launch);
  optional("instrument", s.instrument);
  optional("variants", s.variants);
}

}  // namespace xs::moe
