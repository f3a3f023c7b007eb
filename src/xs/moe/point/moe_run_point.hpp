// xstage moe host layer: picks the measured megamoe point that `xstage-predict moe --from-run` takes its tile
// mainloop times from (a result file of `xstage-bench megamoe`, docs/result-schema.md). Plain C++.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/moe/point/shapes.hpp"

namespace xs::moe {

// What a point must match (shape, precision, K_SM, b_n, target) and what it should match if it can (T, P,
// routing with its alpha, gain and seed).
struct RunPointQuery {
  MoeShape shape;  // matched by name when the point has one and `shape.name` is set, else by h, I, E, top-k
  std::string precision = "bf16";
  int num_sms = 66, block_n = 128;
  std::string target = "host";
  int tokens_per_rank = 6976, num_ranks = 8;
  std::string routing = "skewed";
  double zipf_alpha = 0.5, gain = 1.0;
  std::uint64_t routing_seed = 1;
};

struct RunPoint {
  std::string source;       // "<file> points[i]"
  std::string description;  // "dsv4_flash bf16 skewed T=6976 P=8 K_SM=66 b_n=128 target=host"
  std::vector<std::string> differences;  // preferred axes the point does not match ("T=2048 (asked 6976)")
  bool same_routing = false;             // T, P, routing, alpha, gain and seed all match: same emulated rank
  double l1_mainloop_s = 0, l2_mainloop_s = 0;  // expert_wave variant: extra.variants.expert_wave.tiles medians
  std::optional<double> wave_median_s, interleaved_median_s;  // variants.<v>.median, seconds per launch
  std::optional<double> received_pairs, remote_pairs;         // extra.received_pairs / remote_pairs
};

// Among the points with status "ok" and suite "megamoe" that match every required axis, the one matching
// most preferred axes (the first of equals). input_error("--from-run", ...) naming the file and listing the
// points it holds when none matches, or when the chosen point has no positive expert_wave mainloop medians.
RunPoint select_run_point(const nlohmann::json& result, const std::string& source, const RunPointQuery& query);
// The same from a file on disk (input/io error naming the path).
RunPoint load_run_point(const std::string& path, const RunPointQuery& query);

}  // namespace xs::moe
