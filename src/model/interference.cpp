// xstage model layer: the interference term's evaluation (see interference.hpp). The functional forms are
// filled in with the fitter (issue 28 item 2); until then an identified term with an unknown form throws.
#include "model/interference.hpp"

#include <stdexcept>

namespace xs::model {

const char* interference_status_name(InterferenceStatus status) {
  switch (status) {
    case InterferenceStatus::kNotCalibrated: return "interference not calibrated";
    case InterferenceStatus::kNotIdentified: return "interference not identified";
    case InterferenceStatus::kIdentified: return "identified";
  }
  return "?";
}

SlowdownBracket InterferenceTerm::slowdown(const LoadState& /*load*/) const {
  if (status != InterferenceStatus::kIdentified)
    throw std::logic_error(std::string("InterferenceTerm::slowdown: ") + interference_status_name(status) +
                           (why.empty() ? "" : ": " + why));
  throw std::logic_error("InterferenceTerm::slowdown: unknown form '" + form + "'");
}

}  // namespace xs::model
