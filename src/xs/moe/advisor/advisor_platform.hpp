// xstage moe host layer: M_X for the advisor at one configuration, read from a calibration (PlatformModel):
// R, T_iss^0(K_SM, K_SM V_t) and Q(K_SM) or why Q is absent. Shared by the bench's before-run predictions.
#pragma once
#include <string>

#include "xs/model/platform_model.hpp"
#include "xs/moe/advisor/moe_advisor.hpp"

namespace xs::moe {

// T_iss^0 is looked up at K = num_sms producers of V_t = 128 b_n 2 B each (one L2 tile's Combine rows, local
// ones included: the storers issue all of them). `calibration_target` is the file's config.target (may be empty).
AdvisorPlatform advisor_platform_from(const model::PlatformModel& calibration, const std::string& calibration_target,
                                      int num_sms, int block_n);

}  // namespace xs::moe
