// xstage sim layer: the simulator as a measurement Backend, so the sweep runner, fitter and gate run the
// whole calibration without a GPU (see simulator.hpp).
#include <string>

#include "common/error.hpp"
#include "sim/simulator.hpp"

namespace xs::sim {
namespace {

class SimBackend final : public Backend {
 public:
  explicit SimBackend(const SimParams& params) : params_(params) { validate_params(params_); }

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
    return {{"backend", "sim"}, {"planted", planted}, {"devices", nlohmann::json::array()}};
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
    return simulate_point(params_, spec);
  }

  // A model has no copy engine to measure.
  std::optional<double> reference_bandwidth_bps(const std::string&) override { return std::nullopt; }

 private:
  SimParams params_;
};

}  // namespace

std::unique_ptr<Backend> make_sim_backend(const SimParams& params) {
  return std::make_unique<SimBackend>(params);
}

}  // namespace xs::sim
