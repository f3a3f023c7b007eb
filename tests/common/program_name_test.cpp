// tests/common: the tool name that starts the lines library code prints (common/program_name.hpp).
#include "xs/common/program_name.hpp"

#include <gtest/gtest.h>

#include <string>

namespace xs {
namespace {

TEST(ProgramName, IsTheExecutableUntilAToolSetsIt) {
  // No tool set a name in this test binary yet: its own file name, never a generic "xstage".
  EXPECT_EQ(std::string(program_name()), "xs_common_tests");
  set_program_name("xstage-calibrate");
  EXPECT_EQ(std::string(program_name()), "xstage-calibrate");
  set_program_name("xstage-bench");
  EXPECT_EQ(std::string(program_name()), "xstage-bench");
}

TEST(ProgramName, ALongNameIsCutAt63Bytes) {
  set_program_name(std::string(100, 'x').c_str());
  EXPECT_EQ(std::string(program_name()), std::string(63, 'x'));
  set_program_name("xstage-bench");
}

}  // namespace
}  // namespace xs
