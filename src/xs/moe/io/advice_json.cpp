// xstage moe host layer: an advisor's answer as JSON (see advice_json.hpp).
#include "xs/moe/io/advice_json.hpp"

#include <cmath>

namespace xs::moe {
namespace {

nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json advice_json(const Advice& a) {
  nlohmann::json report = nlohmann::json::object();
  for (const AdvisorRow& r : a.rows) {
    switch (r.kind) {
      case RowKind::kFlag: report[r.key] = r.flag; break;
      case RowKind::kText: report[r.key] = r.text; break;
      case RowKind::kInteger: report[r.key] = static_cast<long long>(std::llround(r.value)); break;
      default: report[r.key] = number(r.value);
    }
  }
  const double inter = a.fluid_no_limit.interleaved_s;
  const double wave_fast = a.fluid_at_capacity ? a.fluid_at_capacity->wave_schedule_s : a.fluid_no_limit.wave_schedule_s;
  const double wave_slow = a.fluid_worst.wave_schedule_s;
  const auto speedup = [&](double wave) { return inter > 0 ? number(wave / inter) : nlohmann::json(nullptr); };
  return {{"schedule", a.schedule},
          {"D", a.lead_rows},
          {"reason", a.reason},
          {"fluid_wave_s", number(wave_fast)},
          {"fluid_wave_worst_s", number(wave_slow)},
          {"fluid_interleaved_s", number(inter)},
          {"predicted_speedup_low", speedup(std::min(wave_fast, wave_slow))},
          {"predicted_speedup_high", speedup(std::max(wave_fast, wave_slow))},
          {"report", report}};
}

}  // namespace xs::moe
