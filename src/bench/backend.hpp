// xstage bench layer: the interface every measurement backend implements (the GPU backend in
// src/runtime, the discrete-event simulator in src/sim). The sweep runner only talks to this.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "report/records.hpp"

namespace xs {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;                 // "gpu" or "sim"
  // Devices, driver/CUDA/NCCL versions, clocks, planted parameters: goes into the result file's meta.
  virtual nlohmann::json describe() const = 0;
  // Why this point cannot run here ("unavailable: one GPU", "K=300 exceeds co-resident CTAs (132)"),
  // or nullopt. Called for every point before any launch, so bad sweeps fail before measuring.
  virtual std::optional<std::string> unavailable_reason(const PointSpec& spec) const = 0;
  // Throws xs::Error on invalid input (exit 2) or device failure (exit 3).
  virtual PointRecord run(const PointSpec& spec) = 0;
  // Physical reference for the target's path (copy-engine bandwidth), bytes/s, if measurable.
  virtual std::optional<double> reference_bandwidth_bps(const std::string& target) { (void)target; return {}; }
};

}  // namespace xs
