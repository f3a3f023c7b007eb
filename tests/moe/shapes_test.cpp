// xstage moe unit tests: configs/moe/models.json (the design notes' shapes) and the strict reader's
// refusals (missing/unknown/ill-typed fields, duplicates, malformed JSON), each naming file and field.
#include <gtest/gtest.h>

#include "xs/common/error.hpp"
#include "xs/moe/point/shapes.hpp"

namespace xs::moe {
namespace {

// The test data folder is tests/data; the repository's configs sit two levels up (as tests/gate does).
const std::string kModels = std::string(XS_TEST_DATA_DIR) + "/../../configs/moe/models.json";

TEST(Shapes, CommittedModelsMatchTheDesignNotes) {
  const auto shapes = load_moe_shapes(kModels);
  ASSERT_EQ(shapes.size(), 8u);
  struct Row { const char* name; const char* paper; int h, inter, e, k; bool synthetic; };
  const Row rows[] = {{"dit_moe", "DiT-MoE", 1408, 5632, 16, 2, false},
                      {"qwen3_5", "Qwen3.5", 4096, 1024, 512, 10, false},
                      {"hy3", "Hy3", 4096, 1536, 192, 8, false},
                      {"mimo_v2_5", "MiMo-V2.5", 4096, 2048, 256, 8, false},
                      {"glm_5_2", "GLM-5.2", 6144, 2048, 256, 8, false},
                      {"dsv4_flash", "DSv4-Flash", 4096, 2048, 256, 6, false},
                      {"dsv4_pro", "DSv4-Pro", 7168, 3072, 384, 6, false},
                      {"dit_moe_fine", nullptr, 1408, 1408, 64, 8, true}};
  for (const Row& row : rows) {
    const MoeShape& s = find_moe_shape(shapes, row.name);
    if (row.paper) {
      EXPECT_EQ(s.paper_name, row.paper);
    }
    EXPECT_EQ(s.hidden, row.h) << row.name;
    EXPECT_EQ(s.intermediate, row.inter) << row.name;
    EXPECT_EQ(s.num_experts, row.e) << row.name;
    EXPECT_EQ(s.top_k, row.k) << row.name;
    EXPECT_EQ(s.synthetic, row.synthetic) << row.name;
    EXPECT_EQ(s.num_experts % 8, 0) << row.name << ": EP = 8 needs E divisible by 8";
  }
}

TEST(Shapes, UnknownNameListsAcceptedNames) {
  const auto shapes = load_moe_shapes(kModels);
  try {
    find_moe_shape(shapes, "DSv4-Flash");
    FAIL() << "expected input_error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "model");
    EXPECT_NE(std::string(e.what()).find("dsv4_flash, dsv4_pro"), std::string::npos) << e.what();
  }
}

std::string field_of(const std::string& text) {
  try {
    parse_moe_shapes(text, "m.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.field();
  }
  return "(no error)";
}

const std::string kGoodModel =
    R"({"name": "a", "paper_name": "A", "public_shape": "A-1", "hidden": 256, "intermediate": 128, )"
    R"("num_experts": 8, "top_k": 2, "synthetic": false})";

TEST(Shapes, ReadsAMinimalFile) {
  const auto shapes = parse_moe_shapes(R"({"models": [)" + kGoodModel + "]}", "m.json");
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_EQ(shapes[0].hidden, 256);
  EXPECT_EQ(shapes[0].top_k, 2);
}

TEST(Shapes, RejectsBadFilesNamingFileAndField) {
  const auto with = [](const std::string& from, const std::string& to) {
    std::string m = kGoodModel;
    m.replace(m.find(from), from.size(), to);
    return R"({"models": [)" + m + "]}";
  };
  EXPECT_EQ(field_of(with(R"("top_k": 2)", R"("top_k": 9)")), "m.json: models[0].top_k");  // > E
  EXPECT_EQ(field_of(with(R"("hidden": 256)", R"("hidden": 0)")), "m.json: models[0].hidden");
  EXPECT_EQ(field_of(with(R"("hidden": 256)", R"("hidden": "256")")), "m.json: models[0].hidden");
  EXPECT_EQ(field_of(with(R"("hidden": 256)", R"("hidden": 256.5)")), "m.json: models[0].hidden");
  EXPECT_EQ(field_of(with(R"("synthetic": false)", R"("synthetic": false, "extra": 1)")), "m.json: models[0].extra");
  EXPECT_EQ(field_of(with(R"(, "synthetic": false)", "")), "m.json: models[0].synthetic");  // missing
  EXPECT_EQ(field_of(with(R"("name": "a")", R"("name": "")")), "m.json: models[0].name");
  EXPECT_EQ(field_of(R"({"models": [)" + kGoodModel + "," + kGoodModel + "]}"), "m.json: models[1].name");  // duplicate
  EXPECT_EQ(field_of(R"({"models": []})"), "m.json: models");
  EXPECT_EQ(field_of(R"({"model": [])"), "m.json");                       // truncated
  EXPECT_EQ(field_of(R"({"models": [], "models": []})"), "m.json");       // duplicate key
  EXPECT_EQ(field_of(R"({"shapes": []})"), "m.json: shapes");             // unknown top-level key
  EXPECT_EQ(field_of(R"([1, 2])"), "m.json: (document)");
  EXPECT_THROW(load_moe_shapes(std::string(XS_TEST_DATA_DIR) + "/no_such_models.json"), Error);
}

}  // namespace
}  // namespace xs::moe
