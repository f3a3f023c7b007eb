// xstage sim layer: the simulator as a measurement Backend, so the sweep runner, fitter and gate run the
// whole calibration without a GPU (see simulator.hpp); one backend per rank of a multi-rank run.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "xs/common/error.hpp"
#include "xs/common/program_name.hpp"
#include "xs/backends/sim/simulator.hpp"

namespace xs::sim {
namespace {

class SimBackend final : public Backend {
 public:
  SimBackend(const SimParams& params, int rank, SimFault fault) : params_(params), rank_(rank), fault_(std::move(fault)) {
    validate_params(params_);
    params_.seed = rank_seed(params.seed, rank);
  }

  std::string name() const override { return "sim"; }

  nlohmann::json describe() const override {
    nlohmann::json planted = {{"R_Bps", params_.drain_rate_bps},
                              {"Q_bytes", params_.capacity_bytes},
                              {"tiss0_ref_s", params_.tiss0_ref_s},
                              {"issue_overhead_s", params_.issue_overhead_s},
                              {"completion_latency_s", params_.completion_latency_s},
                              {"noise", params_.noise},
                              {"seed", params_.seed},
                              {"request_bytes", params_.request_bytes}};
    // Only present when Q depends on K, so the default description keeps its documented keys.
    if (params_.capacity_per_producer_bytes > 0)
      planted["Q_per_producer_bytes"] = params_.capacity_per_producer_bytes;
    nlohmann::json d = {{"backend", "sim"}, {"planted", planted}, {"devices", nlohmann::json::array()}};
    if (rank_ > 0) d["rank"] = rank_;  // rank 0 keeps the one-rank description (and journal identity)
    return d;
  }

  static bool is_sim_target(const std::string& t) { return t == "sim" || t == "host" || t == "local"; }

  // "sim" and "host" name the planted path; "local" the unlimited one (the local-memory control).
  // A spec the simulator refuses (validate_spec) is named here too, so the runner refuses it before it
  // creates the journal rather than at the point.
  std::optional<std::string> unavailable_reason(const PointSpec& spec) const override {
    if (!is_sim_target(spec.target))
      return "target " + spec.target + " does not exist in the simulator (use sim, host or local)";
    try {
      validate_spec(spec);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::nullopt;
  }

  PointRecord run(const PointSpec& spec) override {
    if (auto reason = unavailable_reason(spec))
      throw input_error(is_sim_target(spec.target) ? "point" : "target", *reason);
    ++num_run_;
    if (fault_.rank == rank_ && fault_.point == num_run_) fail();
    return simulate_point(params_, spec);
  }

  // A model has no copy engine to measure.
  std::optional<double> reference_bandwidth_bps(const std::string&) override { return std::nullopt; }

 private:
  void fail() const {
    if (fault_.mode == "exit") {
      std::fprintf(stderr, "%s: rank %d: planted fault (XS_SIM_FAULT): the process dies at its point %zu\n",
                   program_name(), rank_, num_run_);
      std::_Exit(3);
    }
    // A stuck kernel: until the run is aborted, or abandoned like any long point once a stop was requested
    // (SIGINT/SIGTERM: PointInterrupted after kStopGraceS, bench/backend.hpp).
    if (fault_.mode == "hang")
      for (;;) {
        throw_if_stopping();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    throw Error(ExitCode::kDeviceFailure, "sim", "XS_SIM_FAULT",
                fmt::format("planted fault (XS_SIM_FAULT): failed at this rank's point {}", num_run_));
  }

  SimParams params_;
  int rank_ = 0;
  SimFault fault_;
  std::size_t num_run_ = 0;  // points this backend started
};

}  // namespace

std::uint64_t rank_seed(std::uint64_t seed, int rank) {
  if (rank == 0) return seed;
  std::uint64_t x = seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(rank);  // splitmix64 step
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x == 0 ? 1 : x;
}

SimFault parse_sim_fault(const std::string& text) {
  SimFault f;
  if (text.empty()) return f;
  const auto bad = [&] {
    return input_error("XS_SIM_FAULT", fmt::format("'{}': accepted <rank>:<point>:<mode>, rank >= 0, point >= 1 "
                                                   "(1-based), mode throw, exit or hang, e.g. 1:3:throw", text));
  };
  const std::size_t a = text.find(':'), b = a == std::string::npos ? a : text.find(':', a + 1);
  if (b == std::string::npos) throw bad();
  try {
    std::size_t used = 0;
    f.rank = std::stoi(text.substr(0, a), &used);
    if (used != a) throw bad();
    const long long point = std::stoll(text.substr(a + 1, b - a - 1), &used);
    if (used != b - a - 1 || point < 1) throw bad();
    f.point = static_cast<std::size_t>(point);
  } catch (const std::logic_error&) {
    throw bad();
  }
  f.mode = text.substr(b + 1);
  if (f.rank < 0 || (f.mode != "throw" && f.mode != "exit" && f.mode != "hang")) throw bad();
  return f;
}

std::unique_ptr<Backend> make_sim_backend(const SimParams& params, int rank) {
  const char* fault = std::getenv("XS_SIM_FAULT");
  return std::make_unique<SimBackend>(params, rank, parse_sim_fault(fault ? fault : ""));
}

}  // namespace xs::sim
