// xstage common layer: the one error type every library throws, and the documented process exit codes.
// Libraries never call exit(); only a main() maps an Error to its exit code (see docs/exit-codes.md).
#pragma once
#include <stdexcept>
#include <string>

namespace xs {

enum class ExitCode : int {
  kOk = 0,
  kRegression = 1,   // xstage-gate: a metric got worse than its tolerance
  kBadInput = 2,     // bad usage, bad config/result file, unsupported parameter
  kDeviceFailure = 3,  // CUDA / NCCL / NVML call failed at run time
  kNoGpu = 77,       // no suitable GPU here (also CTest's "skip" code)
};

// One error type: a domain ("input", "cuda", "nccl", "io", ...), the field or expression concerned,
// and a message that names the accepted form.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, std::string domain, std::string field, const std::string& message)
      : std::runtime_error(message), code_(code), domain_(std::move(domain)), field_(std::move(field)) {}
  ExitCode code() const { return code_; }
  const std::string& domain() const { return domain_; }
  const std::string& field() const { return field_; }

 private:
  ExitCode code_;
  std::string domain_;
  std::string field_;
};

// Bad user input: `field` names what was wrong, `message` says what is accepted.
inline Error input_error(const std::string& field, const std::string& message) {
  return Error(ExitCode::kBadInput, "input", field, field.empty() ? message : field + ": " + message);
}

inline Error no_gpu_error(const std::string& message) {
  return Error(ExitCode::kNoGpu, "gpu", "", message);
}

}  // namespace xs
