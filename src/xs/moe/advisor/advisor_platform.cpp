// xstage moe host layer: M_X for the advisor from a calibration (see advisor_platform.hpp).
#include "xs/moe/advisor/advisor_platform.hpp"

namespace xs::moe {

AdvisorPlatform advisor_platform_from(const model::PlatformModel& calibration, const std::string& calibration_target,
                                      int num_sms, int block_n) {
  AdvisorPlatform p;
  p.calibration_target = calibration_target;
  p.drain_rate_bps = calibration.drain_rate_bps();
  const double issued_bytes = double(num_sms) * 128.0 * block_n * 2;
  const model::Lookup t = calibration.tiss0_s(num_sms, issued_bytes);
  p.tiss0_s = t.value;
  p.tiss0_extrapolated = t.extrapolated;
  if (calibration.has_capacity()) {
    const model::Lookup q = calibration.capacity_bytes(num_sms);
    p.capacity_bytes = q.value;
    p.capacity_extrapolated = q.extrapolated;
    p.capacity_is_lower_bound = q.is_lower_bound;
  }
  if (!p.capacity_bytes && !calibration.unidentified_capacity_k().empty()) {
    std::string ks;
    for (int k : calibration.unidentified_capacity_k()) ks += (ks.empty() ? "" : ",") + std::to_string(k);
    p.capacity_unavailable = "Q(K) not identified by this calibration (K=" + ks + "): the capacity bound is not decided";
  }
  return p;
}

}  // namespace xs::moe
