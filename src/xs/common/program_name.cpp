// xstage common layer: the running tool's name (see program_name.hpp).
#include "xs/common/program_name.hpp"

#include <cerrno>  // program_invocation_short_name (glibc)
#include <cstddef>

namespace xs {
namespace {

char g_program_name[64] = {};

}  // namespace

void set_program_name(const char* name) {
  std::size_t i = 0;
  for (; name != nullptr && name[i] != '\0' && i + 1 < sizeof g_program_name; ++i) g_program_name[i] = name[i];
  g_program_name[i] = '\0';
}

const char* program_name() {
  if (g_program_name[0] != '\0') return g_program_name;
#if defined(__GLIBC__)
  if (program_invocation_short_name != nullptr && program_invocation_short_name[0] != '\0')
    return program_invocation_short_name;
#endif
  return "xstage";
}

}  // namespace xs
