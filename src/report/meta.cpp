// xstage report layer: the result file's `meta` section: what built the tool, how it was run, where.
#include <unistd.h>

#include <climits>
#include <ctime>

#include "report/result_file.hpp"
#include "xstage/build_info.hpp"

namespace xs::report {
using nlohmann::json;

namespace {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string host_name() {
  char buffer[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

}  // namespace

json make_meta(const std::vector<std::string>& argv, const std::string& backend_name,
               const json& backend_description) {
  json meta = json::object();
  // The backend's facts first (devices, driver_version, cuda_version, nccl_version, clocks...), so the
  // tool's own keys below win on a name clash: those describe this binary and cannot be overridden.
  if (backend_description.is_object()) {
    meta = backend_description;
  } else if (!backend_description.is_null()) {
    meta["backend_description"] = backend_description;
  }
  if (!meta.contains("devices")) meta["devices"] = json::array();
  meta["tool_version"] = build_info::kVersion;
  meta["git_sha"] = build_info::kGitSha;
  meta["git_dirty"] = build_info::kGitDirty;
  meta["build_type"] = build_info::kBuildType;
  meta["compiler"] = build_info::kCxxCompiler;
  if (std::string(build_info::kCudaCompiler).empty()) {
    meta["cuda_compiler"] = nullptr;
  } else {
    meta["cuda_compiler"] = build_info::kCudaCompiler;
  }
  meta["argv"] = argv;
  meta["date_utc"] = utc_now_iso8601();
  meta["host"] = host_name();
  meta["backend"] = backend_name;
  return meta;
}

}  // namespace xs::report
