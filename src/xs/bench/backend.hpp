// xstage bench layer: the interface every measurement backend implements (the GPU backend in
// src/xs/backends/gpu, the discrete-event simulator in src/xs/backends/sim). The sweep runner only talks to this. Also the
// cooperative stop request that lets a backend end a long point between repetitions.
#pragma once
#include <time.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "xs/common/error.hpp"
#include "xs/report/records.hpp"

namespace xs {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;                 // "gpu" or "sim"
  // Devices, driver/CUDA/NCCL versions, clocks, planted parameters: goes into the result file's meta.
  // The runner also copies the run's identity from it into the journal header: "planted" (simulator
  // parameters and seed) and "device_index" with "devices"[i].name/.uuid (the measured GPU).
  virtual nlohmann::json describe() const = 0;
  // Why this point cannot run here ("unavailable: one GPU", "K=300 exceeds co-resident CTAs (132)"),
  // or nullopt. Called for every point before any launch, so bad sweeps fail before measuring.
  virtual std::optional<std::string> unavailable_reason(const PointSpec& spec) const = 0;
  // Throws xs::Error on invalid input (exit 2) or device failure (exit 3), PointInterrupted when a stop
  // was requested (call throw_if_stopping() between repetitions).
  virtual PointRecord run(const PointSpec& spec) = 0;
  // Physical reference for the target's path (copy-engine bandwidth), bytes/s, if measurable.
  virtual std::optional<double> reference_bandwidth_bps(const std::string& target) { (void)target; return {}; }
};

// Stop requests. The sweep runner's SIGINT/SIGTERM handler stores the CLOCK_MONOTONIC time of the first
// signal (0: none). A point in progress may still finish within kStopGraceS of it; after that the
// backend abandons it at the next repetition boundary (its partial samples are not a point).
inline std::atomic<std::int64_t> g_stop_requested_ns{0};
inline constexpr double kStopGraceS = 1.0;

inline std::int64_t monotonic_ns() {  // clock_gettime is async-signal-safe: the handler uses it too
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A point abandoned because of a stop request; the runner keeps every finished point and exits 130.
class PointInterrupted : public Error {
 public:
  PointInterrupted()
      : Error(static_cast<ExitCode>(130), "interrupt", "", "interrupted: the point in progress was abandoned") {}
};

// Cheap when no stop is pending (one relaxed load); call between repetitions.
inline void throw_if_stopping() {
  const std::int64_t at = g_stop_requested_ns.load(std::memory_order_relaxed);
  if (at != 0 && static_cast<double>(monotonic_ns() - at) > kStopGraceS * 1e9) throw PointInterrupted();
}

}  // namespace xs
