// xstage model layer: the interference term as a whole-kernel time model consumes it (issue 28 item 3): a
// status and a slowdown function of the load. A fitted model::InterferenceTerm becomes one through
// slowdown_source_of(); tests and the application-data reference fits build their own. Header only.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "xs/model/interference.hpp"

namespace xs::model {

struct SlowdownSource {
  InterferenceStatus status = InterferenceStatus::kNotCalibrated;
  std::string why;    // for a status other than kIdentified
  std::string label;  // where the term comes from (a calibration file, "hand-made", ...)
  std::function<SlowdownBracket(const LoadState&)> slowdown;
  // Where a load leaves what the term was calibrated on (InterferenceTerm::outside_calibration): one sentence per
  // reason, "; "-joined, empty inside. Unset: the source has no calibrated range (the identity, hand-made terms).
  std::function<std::string(const LoadState&)> outside;
  // Loads where the slowdown is only a bracket below the calibrated range (InterferenceTerm::below_calibration).
  std::function<bool(const LoadState&)> below;

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
  s.outside = [term](const LoadState& load) { return term.outside_calibration(load); };
  s.below = [term](const LoadState& load) { return term.below_calibration(load); };
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

// Collects where a replay's loads leave the term's calibration: the number of evaluations outside and each distinct
// reason once, in first-seen order (the first kMaxReasons; the rest are counted).
struct OutsideCalibration {
  static constexpr std::size_t kMaxReasons = 3;
  int evaluations = 0, outside = 0, more_reasons = 0, below = 0;
  double below_extra_s = 0;  // the most the below-range loads can add: sum of tile time x (s_hi - 1) over them
  std::vector<std::string> reasons;
  // tile_s: the tile's time the slowdown multiplies (0: not known, the load's extra not counted).
  void add(const SlowdownSource& term, const LoadState& load, double tile_s = 0) {
    ++evaluations;
    if (term.below && term.slowdown && term.below(load)) {
      ++below;
      if (tile_s > 0) below_extra_s += tile_s * (term.slowdown(load).hi - 1);
    }
    if (!term.outside) return;
    const std::string why = term.outside(load);
    if (why.empty()) return;
    ++outside;
    for (const std::string& r : reasons)
      if (r == why) return;
    if (reasons.size() < kMaxReasons) reasons.push_back(why); else ++more_reasons;
  }
  bool any() const { return outside > 0; }
  // "the interference term is used outside its calibration at N of M loads: <reason>[; ...]" ("" when none).
  std::string sentence() const {
    if (!any()) return "";
    std::string out = "the interference term is used outside its calibration at " + std::to_string(outside) + " of " +
                      std::to_string(evaluations) + " loads: ";
    for (std::size_t i = 0; i < reasons.size(); ++i) out += (i ? " | " : "") + reasons[i];
    if (more_reasons > 0) out += " | and " + std::to_string(more_reasons) + " more load(s) with other values";
    return out;
  }
};

}  // namespace xs::model
