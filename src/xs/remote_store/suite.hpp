// xstage remote_store slice: the remote_store.* micro-benchmark suites (paper section 3) as registered suites of
// xstage-bench. They run through bench::run_sweep on the backend the shared flags choose (gpu or sim), so
// they read the tool's backend, sweep and table flags (shared with xstage-calibrate) rather than adding
// their own: register_suites takes them, where an XS_APPS application's takes the registry alone.
#pragma once
#include "xs/bench/suite_registry.hpp"
#include "xs/remote_store/io/table_output.hpp"
#include "xs/remote_store/run/sweep_options.hpp"

namespace xs::remote_store {

// The tool-level flags the remote_store suites read; owned by main, outliving the registry's use.
struct RemoteStoreFlags {
  BackendOptions backend;
  SweepOverrides sweep;
  TableOutputs tables;
};

// Registers remote_store.periodic, remote_store.isolated, remote_store.local_control and remote_store.loaded.
void register_suites(bench::SuiteRegistry& registry, const RemoteStoreFlags& flags);

}  // namespace xs::remote_store
