// xstage moe host layer: the `megamoe` suite of xstage-bench (flags, dry run, registration), registered for the
// XS_APPS entry "moe" of the top CMakeLists.txt; running needs the CUDA part (moe_bench, xs_moe), which the build
// links where nvcc exists.
#pragma once
#include "xs/bench/suite_registry.hpp"

namespace xs::moe {

void register_suites(bench::SuiteRegistry& registry);

}  // namespace xs::moe
