// xstage moe host layer: the MoE model shapes of the experiment (configs/moe/models.json, design notes
// section 2), read strictly, and lookup by name. Plain C++.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace xs::moe {

struct MoeShape {
  std::string name;          // stable id used on the command line and in results ("dsv4_flash")
  std::string paper_name;    // the paper's name ("DSv4-Flash")
  std::string public_shape;  // the public model whose shape stands in ("DeepSeek-V4-Flash")
  int hidden = 0;            // h
  int intermediate = 0;      // I, expert intermediate size
  int num_experts = 0;       // E, routed experts
  int top_k = 0;
  bool synthetic = false;    // not a published model (the fine-grained DiT-MoE variant)
};

// Reads {"comment"?: string, "models": [{name, paper_name, public_shape, hidden, intermediate, num_experts,
// top_k, synthetic}, ...]}: every model field required, no other key, integers >= 1, top_k <= num_experts,
// names unique and non-empty. Errors are input_error whose field is "<source>: models[i].field".
std::vector<MoeShape> parse_moe_shapes(std::string_view json_text, const std::string& source);
// The same from a file (io error naming the path if it cannot be read).
std::vector<MoeShape> load_moe_shapes(const std::string& path);
// The models file `given` (--models-file) from the working directory, else from the repository the tool was built
// from; input_error("--models-file", ...) where neither exists.
std::string find_models_file(const std::string& given);

// The shape called `name` (exact match on MoeShape::name); input_error("model", ...) listing the accepted
// names otherwise.
const MoeShape& find_moe_shape(const std::vector<MoeShape>& shapes, const std::string& name);

}  // namespace xs::moe
