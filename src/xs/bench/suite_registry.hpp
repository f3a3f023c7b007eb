// xstage bench layer: the registry of xstage-bench suites. A suite is plain data: its id, one line for
// --list, the options it adds (through OptionSink, so this layer stays free of CLI11), a dry run and a run.
//
// A new application registers its suites from its own folder src/<app>/ (see attention/suite.cpp): suite.hpp
// declares `void xs::<app>::register_suites(bench::SuiteRegistry&)` and suite.cpp, in the library
// xs_<app>_suite that is always built, defines it:
//   void register_suites(bench::SuiteRegistry& r) {
//     auto flags = std::make_shared<MoeFlags>();  // shared by the option hook and the run
//     r.add({.id = "megamoe", .description = "...", .options_title = "Options of the megamoe suite",
//            .add_options = [flags](bench::OptionSink& s) { s.add_text("--tokens", flags->tokens, "..."); },
//            .dry_run = [flags](const bench::SuiteContext& c) { ...print the points...; return 0; },
//            .run = [flags](const bench::SuiteContext& c) { return run_moe_bench(*flags, c); }});
//   }
// whose run calls the CUDA library only where that exists (compiled with a definition the CMake sets when
// the CUDA target exists, else throw no_gpu_error("... needs the CUDA build")). The run goes through
// bench/app_bench.hpp and the points through common/axes.hpp. The one edit outside the folder is the entry <app>
// in XS_APPS (the top CMakeLists.txt): the build adds the folder, links xs_<app>_suite into xstage-bench and calls
// register_suites from code generated in that list's order (src/xs/cli/CMakeLists.txt), which is --list's order.
// Explicit calls, not static registrar objects: a registrar in a static library is dropped by the linker unless
// something references its object file, and the order of static initialisation across files is not --list's.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "xs/bench/rank_layout.hpp"

namespace xs::bench {

class RankComm;

// Flags xstage-bench owns for every suite, filled before dry_run/run is called.
struct SuiteContext {
  std::string suite_id;
  std::string backend = "gpu";          // --backend: gpu | sim
  std::string target;                   // --target as given; "" = the suite's default
  int device = 0;                       // --device: the GPU that issues the stores
  std::optional<int> repetitions;       // --reps
  std::string model_path;               // --model
  std::string out_path;                 // --out as given; "" = the suite's default
  bool resume = false, progress = true, json = false;
  bool resume_any_build = false;        // --resume-any-build (sets resume too)
  std::string table_flag;               // "--csv" or "--md" when one was given, else ""
  std::vector<std::string> argv;
  // This rank (bench/rank_launch.hpp): its device is rank.device; comm is null only outside xstage-bench's
  // start-up (tests). One rank unless launched with --gpus N or under mpirun.
  RankContext rank;
  RankComm* comm = nullptr;
};

// Where a suite declares its flags. The CLI's implementation puts them in an option group titled by the
// suite; a flag two suites declare with the same kind is one flag that sets both suites' values.
class OptionSink {
 public:
  virtual ~OptionSink() = default;
  virtual void add_text(const std::string& flag, std::string& value, const std::string& help) = 0;
  virtual void add_integer(const std::string& flag, int& value, const std::string& help, int min_value,
                           int max_value) = 0;
  virtual void add_number(const std::string& flag, double& value, const std::string& help) = 0;
  virtual void add_flag(const std::string& flag, bool& value, const std::string& help) = 0;
};

struct SuiteDefinition {
  std::string id;                                          // stable dotted id: "fa_a2a"
  std::string description;                                 // one line for --list
  std::string example;                                     // flags of a --help example after the id; may be ""
  std::string options_title;                               // --help group; "" when it adds no options
  std::function<void(OptionSink&)> add_options;            // may be empty
  std::function<int(const SuiteContext&)> dry_run;         // prints the expanded sweep; no device call
  std::function<int(const SuiteContext&)> run;            // returns the exit code; throws xs::Error
  // The result file when --out is not given. xstage-bench resolves --out with it before dry_run/run (the
  // outputs are checked against the inputs there), so a run sees SuiteContext::out_path set.
  std::function<std::string(const SuiteContext&)> default_out_path;
  // The run uses SuiteContext::rank/comm (bench/app_bench's rank-aware loop, the rank's device). xstage-bench
  // refuses to start a suite without it on several ranks (each rank would write the same file).
  bool runs_on_ranks = false;
};

class SuiteRegistry {
 public:
  // Refuses an empty id, a missing dry_run/run, options without a title and an id already registered
  // (std::logic_error: a build that registers a suite twice is a bug, not bad input; run_main exits 3).
  void add(SuiteDefinition suite);
  // The suite, or input_error("suite", "unknown suite 'x'; accepted: a, b (see --list)") (exit 2).
  const SuiteDefinition& at(const std::string& id) const;
  const std::vector<SuiteDefinition>& suites() const { return suites_; }  // registration order
  // "<id padded to 30> <description>\n" per suite: the --list output.
  std::string list_text() const;

 private:
  std::vector<SuiteDefinition> suites_;
};

}  // namespace xs::bench
