// Helpers shared by the fa_a2a report tests: a Summary from its three summary values, and whether a JSON
// string holds a phrase.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "xs/attention/point/fa_point.hpp"

namespace xs::attention::test_stats {

inline Summary band(double median_s, double p10_s, double p90_s) {
  Summary t;
  t.median = median_s;
  t.p10 = p10_s;
  t.p90 = p90_s;
  return t;
}

inline bool has(const nlohmann::json& s, const char* part) {
  return s.get<std::string>().find(part) != std::string::npos;
}

}  // namespace xs::attention::test_stats
