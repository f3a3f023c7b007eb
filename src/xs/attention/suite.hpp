// xstage attention layer: registers the fa_a2a suite with xstage-bench (bench/suite_registry.hpp; called for the
// XS_APPS entry "attention" of the top CMakeLists.txt). Host code, built with or without CUDA: without it the suite
// is still listed and its --dry-run works; running it says it needs the CUDA build (exit 77).
#pragma once
#include "xs/bench/suite_registry.hpp"

namespace xs::attention {

void register_suites(bench::SuiteRegistry& registry);

}  // namespace xs::attention
