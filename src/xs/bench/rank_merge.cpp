// xstage bench layer: per-rank measurement, verification and application-point merge (see rank_merge.hpp).
#include "xs/bench/rank_merge.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "xs/common/error.hpp"

namespace xs::bench {

Summary merge_rank_trials(const std::vector<std::vector<double>>& seconds_by_rank) {
  if (seconds_by_rank.empty()) throw input_error("ranks", "no rank reported a measurement; need at least one");
  const std::size_t num_trials = seconds_by_rank.front().size();
  if (num_trials == 0) throw input_error("rank 0", "reported no trials; every rank must report the same trials");
  for (std::size_t r = 0; r < seconds_by_rank.size(); ++r) {
    const auto& trials = seconds_by_rank[r];
    if (trials.size() != num_trials) {
      throw input_error("rank " + std::to_string(r),
                        "ragged input: " + std::to_string(trials.size()) + " trials, rank 0 has " +
                            std::to_string(num_trials) + "; every rank must report the same trials");
    }
    for (std::size_t t = 0; t < num_trials; ++t) {
      if (!std::isfinite(trials[t])) {
        throw input_error("rank " + std::to_string(r), "trial " + std::to_string(t) + " time is not finite");
      }
    }
  }
  std::vector<double> slowest_s(num_trials);
  for (std::size_t t = 0; t < num_trials; ++t) {
    double max_s = seconds_by_rank.front()[t];
    for (const auto& trials : seconds_by_rank) max_s = std::max(max_s, trials[t]);
    slowest_s[t] = max_s;
  }
  return summarize(std::move(slowest_s));
}

RankVerification merge_rank_verification(const std::vector<RankVerification>& by_rank) {
  if (by_rank.empty()) throw input_error("ranks", "no rank reported a verification; need at least one");
  RankVerification merged;
  merged.verified = true;
  for (const auto& v : by_rank) {
    merged.verified = merged.verified && v.verified;
    merged.num_wrong += v.num_wrong;
    merged.num_unwritten += v.num_unwritten;
    merged.num_unexpected += v.num_unexpected;
  }
  return merged;
}

namespace {

int status_rank(const std::string& status) { return status == "failed" ? 2 : status == "skipped" ? 1 : 0; }

nlohmann::json rank_summary(std::size_t rank, const report::AppPoint& p) {
  nlohmann::json medians = nlohmann::json::object();
  for (const auto& [name, s] : p.variants) medians[name] = s.median;
  return {{"rank", rank}, {"status", p.status}, {"variants_median_s", medians}};
}

}  // namespace

report::AppPoint merge_rank_points(const std::vector<report::AppPoint>& by_rank) {
  if (by_rank.empty()) throw input_error("ranks", "no rank reported the point; need at least one");
  if (by_rank.size() == 1) return by_rank.front();
  const report::AppPoint& first = by_rank.front();
  std::size_t worst = 0;
  for (std::size_t r = 0; r < by_rank.size(); ++r) {
    const report::AppPoint& p = by_rank[r];
    if (p.id != first.id || p.axes != first.axes)
      throw input_error("rank " + std::to_string(r), "reported point " + p.id + " " + p.axes.dump() +
                                                         ", rank 0 reported " + first.id + " " + first.axes.dump() +
                                                         ": every rank must run the same point");
    if (status_rank(p.status) > status_rank(by_rank[worst].status)) worst = r;
  }
  report::AppPoint merged;
  merged.id = first.id;
  merged.suite = first.suite;
  merged.axes = first.axes;
  merged.prediction = first.prediction;
  merged.extra = first.extra;
  nlohmann::json ranks = {{"num_ranks", by_rank.size()},
                          {"rule", "per trial the slowest rank, then median/p10/p90 over trials"},
                          {"by_rank", nlohmann::json::array()}};
  for (std::size_t r = 0; r < by_rank.size(); ++r) ranks["by_rank"].push_back(rank_summary(r, by_rank[r]));

  if (by_rank[worst].status != "ok") {
    merged.status = by_rank[worst].status;
    merged.reason = "rank " + std::to_string(worst) + ": " + by_rank[worst].reason;
  } else {
    for (const auto& [name, s] : first.variants) {
      std::vector<std::vector<double>> seconds_by_rank;
      for (std::size_t r = 0; r < by_rank.size(); ++r) {
        const auto it = by_rank[r].variants.find(name);
        if (it == by_rank[r].variants.end() || by_rank[r].variants.size() != first.variants.size())
          throw input_error("rank " + std::to_string(r), "reported other variants than rank 0 (missing or extra " +
                                                             name + "): every rank must time the same variants");
        seconds_by_rank.push_back(it->second.samples);
      }
      merged.variants[name] = merge_rank_trials(seconds_by_rank);
    }
    nlohmann::json dropped = nlohmann::json::array();
    for (const auto& [key, s] : first.paired) {
      const std::size_t at = key.find("_minus_");
      const auto a = at == std::string::npos ? merged.variants.end() : merged.variants.find(key.substr(0, at));
      const auto b = at == std::string::npos ? merged.variants.end() : merged.variants.find(key.substr(at + 7));
      if (a == merged.variants.end() || b == merged.variants.end() ||
          a->second.samples.size() != b->second.samples.size()) {
        dropped.push_back(key);
        continue;
      }
      std::vector<double> d(a->second.samples.size());
      for (std::size_t t = 0; t < d.size(); ++t) d[t] = a->second.samples[t] - b->second.samples[t];
      merged.paired[key] = summarize(std::move(d));
    }
    if (!dropped.empty()) ranks["dropped_paired"] = dropped;
  }

  merged.verification.checked = true;
  merged.verification.passed = true;
  nlohmann::json values_by_rank = nlohmann::json::array();
  for (std::size_t r = 0; r < by_rank.size(); ++r) {
    const report::AppVerification& v = by_rank[r].verification;
    merged.verification.checked = merged.verification.checked && v.checked;
    merged.verification.passed = merged.verification.passed && v.checked && v.passed;
    if (v.checked && !v.passed && merged.verification.detail.empty())
      merged.verification.detail = "rank " + std::to_string(r) + ": " + (v.detail.empty() ? "no detail given" : v.detail);
    values_by_rank.push_back(v.values);
  }
  merged.verification.values = first.verification.values.is_object() ? first.verification.values : nlohmann::json::object();
  merged.verification.values["by_rank"] = values_by_rank;
  merged.extra["ranks"] = ranks;
  return merged;
}

namespace {

// One statistic of a record on every rank, merged per repetition; nullopt unless every rank has samples of it.
std::optional<Summary> merge_statistic(const std::vector<PointRecord>& by_rank,
                                       const std::function<const Summary*(const PointRecord&)>& get) {
  std::vector<std::vector<double>> seconds_by_rank;
  for (const auto& record : by_rank) {
    const Summary* s = get(record);
    if (s == nullptr || s->samples.empty()) return std::nullopt;
    seconds_by_rank.push_back(s->samples);
  }
  return merge_rank_trials(seconds_by_rank);
}

}  // namespace

PointRecord merge_rank_records(const std::vector<PointRecord>& by_rank) {
  if (by_rank.empty()) throw input_error("ranks", "no rank reported the point; need at least one");
  if (by_rank.size() == 1) return by_rank.front();
  const PointRecord& first = by_rank.front();
  const std::string key = point_key(first.spec);
  PointRecord merged;
  merged.id = first.id;
  merged.spec = first.spec;
  for (std::size_t r = 0; r < by_rank.size(); ++r) {
    const PointRecord& p = by_rank[r];
    if (p.id != first.id || point_key(p.spec) != key)
      throw input_error("rank " + std::to_string(r), "reported point " + p.id + " " + point_key(p.spec) +
                                                         ", rank 0 reported " + first.id + " " + key +
                                                         ": every rank must run the same point");
    if (p.skipped && !merged.skipped) {
      merged.skipped = true;
      merged.skip_reason = "rank " + std::to_string(r) + ": " + p.skip_reason;
    }
  }
  if (merged.skipped) return merged;  // a subset of ranks is not the run's time
  const auto issue = merge_statistic(by_rank, [](const PointRecord& p) { return &p.issue_time_s; });
  if (!issue) throw input_error("issue_time_s", "a rank reported no repetitions of a measured point");
  merged.issue_time_s = *issue;
  merged.issue_time_max_s = merge_statistic(
      by_rank, [](const PointRecord& p) { return p.issue_time_max_s ? &*p.issue_time_max_s : nullptr; });
  if (auto period = merge_statistic(by_rank, [](const PointRecord& p) { return &p.period_s; })) merged.period_s = *period;
  merged.completion_s =
      merge_statistic(by_rank, [](const PointRecord& p) { return p.completion_s ? &*p.completion_s : nullptr; });
  merged.verification.checked = true;
  for (const auto& p : by_rank) {
    merged.verification.checked = merged.verification.checked && p.verification.checked;
    merged.verification.bytes_checked += p.verification.bytes_checked;
    merged.verification.wrong += p.verification.wrong;
    merged.clock_flagged = merged.clock_flagged || p.clock_flagged;
    if (p.sm_clock_hz > 0 && (merged.sm_clock_hz == 0 || p.sm_clock_hz < merged.sm_clock_hz))
      merged.sm_clock_hz = p.sm_clock_hz;
  }
  return merged;
}

}  // namespace xs::bench
