// xstage report tests: small valid records and a scratch directory shared by the report test files.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

#include "xs/report/records.hpp"
#include "xs/report/result_file.hpp"

namespace xs::test {

inline PointRecord sample_record(int num_producers = 132, double gap_s = 2e-6) {
  PointRecord r;
  r.spec.target = "peer:1";
  r.spec.num_producers = num_producers;
  r.spec.bytes_per_producer = 32768;
  r.spec.gap_s = gap_s;
  r.id = point_id(r.spec);
  r.issue_time_s = summarize({4.1e-6, 3.9e-6, 4.0e-6});
  r.period_s = summarize({6.1e-6, 6.0e-6, 6.2e-6});
  r.sm_clock_hz = 1.98e9;
  r.verification = {true, 4325376, 0};
  r.prediction = Prediction{4.0e-6, 6.03e-6, 6.03e-6};
  return r;
}

inline report::ResultFile sample_file() {
  report::ResultFile f;
  f.meta = report::make_meta({"xstage-bench", "--K", "132"}, "sim", nlohmann::json::parse(R"({"devices": [{"name": "sim"}]})"));
  f.config = {{"K", "132"}, {"B", "32KiB"}};
  f.points = {sample_record(132, 0.0), sample_record(132, 2e-6), sample_record(66, 2e-6)};
  f.points[1].completion_s = summarize({8e-6, 7.9e-6});
  f.points[2].skipped = true;
  f.points[2].skip_reason = "unavailable: one GPU";
  f.points[2].issue_time_s = {};
  f.points[2].period_s = {};
  f.points[2].prediction.reset();
  f.model = {{"R_Bps", 7.17e11}, {"R_ci95", {7.09e11, 7.24e11}}};
  return f;
}

// A fresh directory under the system temp dir, removed with its contents at scope end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "xs_report_test_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }
  std::size_t num_entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(path_)) ++n;
    return n;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace xs::test
