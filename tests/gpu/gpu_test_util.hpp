// xstage GPU tests: shared helpers (small specs that run in milliseconds, device facts).
#pragma once
#include <memory>

#include "xs/bench/backend.hpp"
#include "xs/report/records.hpp"
#include "xs/backends/gpu/gpu_backend.hpp"

namespace xs::test {

inline PointSpec small_spec(const std::string& target = "local") {
  PointSpec s;
  s.suite = Suite::kPeriodic;
  s.target = target;
  s.num_producers = 4;
  s.bytes_per_producer = 4096;
  s.gap_s = 1e-6;
  s.num_bursts = 6;
  s.warmup_bursts = 2;
  s.repetitions = 2;
  return s;
}

inline int sm_count(const Backend& backend) { return backend.describe().at("devices").at(0).at("sm_count"); }
inline int num_gpus(const Backend& backend) { return backend.describe().at("num_gpus"); }

}  // namespace xs::test
