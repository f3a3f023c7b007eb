// xstage moe host layer: strict reader of configs/moe/models.json (see shapes.hpp).
#include "xs/moe/point/shapes.hpp"

#include <filesystem>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"

namespace xs::moe {
namespace {

using nlohmann::json;
using report::index_path;
using report::ObjectReader;

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

MoeShape read_shape(const json& j, const std::string& path) {
  const ObjectReader r(j, path, {"name", "paper_name", "public_shape", "hidden", "intermediate", "num_experts",
                                 "top_k", "synthetic"});
  MoeShape s;
  s.name = report::read_string(r.required("name"), r.path("name"));
  if (s.name.empty()) throw input_error(r.path("name"), "expected a non-empty name");
  s.paper_name = report::read_string(r.required("paper_name"), r.path("paper_name"));
  s.public_shape = report::read_string(r.required("public_shape"), r.path("public_shape"));
  s.hidden = static_cast<int>(report::read_integer(r.required("hidden"), r.path("hidden"), 1, kIntMax));
  s.intermediate =
      static_cast<int>(report::read_integer(r.required("intermediate"), r.path("intermediate"), 1, kIntMax));
  s.num_experts = static_cast<int>(report::read_integer(r.required("num_experts"), r.path("num_experts"), 1, kIntMax));
  s.top_k = static_cast<int>(report::read_integer(r.required("top_k"), r.path("top_k"), 1, s.num_experts));
  s.synthetic = report::read_bool(r.required("synthetic"), r.path("synthetic"));
  return s;
}

}  // namespace

std::vector<MoeShape> parse_moe_shapes(std::string_view json_text, const std::string& source) {
  std::vector<MoeShape> shapes;
  try {
    const json doc = report::parse_json_text(json_text, source);
    const ObjectReader top(doc, "", {"comment", "models"});
    if (const json* c = top.optional("comment")) report::read_string(*c, "comment");
    const json& models = report::read_array(top.required("models"), "models");
    if (models.empty()) throw input_error("models", "expected at least one model");
    std::set<std::string> names;
    for (std::size_t i = 0; i < models.size(); ++i) {
      const std::string path = index_path("models", i);
      shapes.push_back(read_shape(models[i], path));
      if (!names.insert(shapes.back().name).second)
        throw input_error(path + ".name", "duplicate model name \"" + shapes.back().name + "\"");
    }
  } catch (const Error& e) {
    if (e.field() == source) throw;  // parse errors already name the file
    throw input_error(source + ": " + e.field(), report::bare_message(e));
  }
  return shapes;
}

std::vector<MoeShape> load_moe_shapes(const std::string& path) {
  return parse_moe_shapes(report::read_text_file(path), path);
}

const MoeShape& find_moe_shape(const std::vector<MoeShape>& shapes, const std::string& name) {
  for (const MoeShape& s : shapes)
    if (s.name == name) return s;
  std::string accepted;
  for (const MoeShape& s : shapes) accepted += (accepted.empty() ? "" : ", ") + s.name;
  throw input_error("model", "unknown model \"" + name + "\"; accepted: " + accepted);
}

std::string find_models_file(const std::string& given) {
  if (std::filesystem::exists(given)) return given;
#if defined(XS_SOURCE_DIR)
  const std::string in_source = std::string(XS_SOURCE_DIR) + "/" + given;
  if (std::filesystem::exists(in_source)) return in_source;
#endif
  throw input_error("--models-file", "'" + given + "' not found (run from the repository root or pass the path)");
}

}  // namespace xs::moe
