// xstage common layer: the name of the running tool ("xstage-bench"), which starts every line it prints on stderr,
// library code's included: one name per tool, never a generic "xstage:". Plain C++.
#pragma once

namespace xs {

// Set by the tool's main (cli::run_main) before anything else runs; names longer than 63 bytes are cut.
void set_program_name(const char* name);

// The name set, else the executable's file name (argv[0], e.g. a test binary), else "xstage".
// Async-signal-safe (a fixed buffer, no allocation): a signal handler's message uses it too.
const char* program_name();

}  // namespace xs
