// xstage model layer: the interference term as a whole-kernel time model consumes it (issue 28 item 3): a
// status and a slowdown function of the load. A fitted model::InterferenceTerm becomes one through
// slowdown_source_of(); tests and the application-data reference fits build their own. Header only.
#pragma once
#include <functional>
#include <string>

#include "model/interference.hpp"

namespace xs::model {

struct SlowdownSource {
  InterferenceStatus status = InterferenceStatus::kNotCalibrated;
  std::string why;    // for a status other than kIdentified
  std::string label;  // where the term comes from (a calibration file, "hand-made", ...)
  std::function<SlowdownBracket(const LoadState&)> slowdown;

  bool usable() const { return status == InterferenceStatus::kIdentified && static_cast<bool>(slowdown); }
  // "interference not calibrated: <why>" (or not identified); "" when usable.
  std::string reason_not_usable() const {
    if (usable()) return "";
    if (status == InterferenceStatus::kIdentified) return "interference term identified but has no slowdown function";
    return std::string(interference_status_name(status)) + (why.empty() ? "" : ": " + why);
  }
};

inline SlowdownSource slowdown_source_of(const InterferenceTerm& term, const std::string& label) {
  SlowdownSource s;
  s.status = term.status;
  s.why = term.why;
  s.label = label;
  s.slowdown = [term](const LoadState& load) { return term.slowdown(load); };
  return s;
}

// The identity term (s = 1 at every load): the Burst-Gap replay without interference.
inline SlowdownSource no_interference(const std::string& label) {
  SlowdownSource s;
  s.status = InterferenceStatus::kIdentified;
  s.label = label;
  s.slowdown = [](const LoadState&) { return SlowdownBracket{1, 1, 1}; };
  return s;
}

}  // namespace xs::model
