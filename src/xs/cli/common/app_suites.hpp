// xstage cli layer: the application suites of xstage-bench. Each entry <app> of XS_APPS (the top CMakeLists.txt)
// is a folder src/<app>/ whose suite.hpp declares xs::<app>::register_suites; register_app_suites calls them in
// the list's order, which is --list's order. Its definition is generated (cmake/app_suites.cpp.in).
#pragma once
#include "xs/bench/suite_registry.hpp"

namespace xs::cli {

void register_app_suites(bench::SuiteRegistry& registry);

}  // namespace xs::cli
