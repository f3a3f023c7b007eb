// xstage cli layer: the CLI11 flags of the options xstage-calibrate and xstage-bench share: the backend, the
// sweep overrides and the point tables. The structs they fill and the code that reads them are the remote_store
// slice's (remote_store/run/sweep_options.hpp, remote_store/io/table_output.hpp).
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "xs/remote_store/io/table_output.hpp"
#include "xs/remote_store/run/sweep_options.hpp"

namespace xs::cli {

void add_backend_options(CLI::App& app, remote_store::BackendOptions& options);
// `with_suite`: xstage-calibrate's --suite (xstage-bench names the suite as its argument).
void add_sweep_overrides(CLI::App& app, remote_store::SweepOverrides& overrides, bool with_suite = true);
// --csv FILE / --md; `what` names the rows in the help ("every point").
void add_table_flags(CLI::App& app, remote_store::TableOutputs& outputs, const std::string& what);

}  // namespace xs::cli
