// xstage attention point: the FlashAttention kernel's knobs (see fa_knobs.hpp).
#include "xs/attention/point/fa_knobs.hpp"

#include <climits>

#include "xs/common/error.hpp"
#include "xs/report/json_read.hpp"

namespace xs::attention {
namespace ka = xs::kernels::attention;
using nlohmann::json;

FaKnobs fa_knobs_of_earlier_points() {
  FaKnobs k;
  k.schedule = ka::mainloop_schedule_name(ka::MainloopSchedule::kBaseline);
  k.tile_scheduler = ka::tile_scheduler_name(ka::TileSchedulerKind::kStatic);
  k.store_cache = ka::store_cache_policy_name(ka::StoreCachePolicy::kDefault);
  k.kv_cluster = 1;
  k.heads_per_band = 1;
  k.tail_splits = 1;
  return k;
}

void to_json(json& j, const FaKnobs& k) {
  const FaKnobs earlier = fa_knobs_of_earlier_points();
  j = json::object();
  if (k.schedule != earlier.schedule) j["fa_schedule"] = k.schedule;
  if (k.tile_scheduler != earlier.tile_scheduler) j["fa_tile_scheduler"] = k.tile_scheduler;
  if (k.store_cache != earlier.store_cache) j["fa_store_cache"] = k.store_cache;
  if (k.kv_cluster != earlier.kv_cluster) j["fa_kv_cluster"] = k.kv_cluster;
  if (k.heads_per_band != earlier.heads_per_band) j["fa_heads_per_band"] = k.heads_per_band;
  if (k.tail_splits != earlier.tail_splits) j["fa_tail_splits"] = k.tail_splits;
}

void from_json(const json& axes, FaKnobs& k) {
  k = fa_knobs_of_earlier_points();
  const auto text = [&](const char* key, std::string& out) {
    if (const auto it = axes.find(key); it != axes.end()) out = report::read_string(*it, std::string("axes.") + key);
  };
  const auto integer = [&](const char* key, int& out) {
    if (const auto it = axes.find(key); it != axes.end())
      out = static_cast<int>(report::read_integer(*it, std::string("axes.") + key, INT_MIN, INT_MAX));
  };
  text("fa_schedule", k.schedule);
  text("fa_tile_scheduler", k.tile_scheduler);
  text("fa_store_cache", k.store_cache);
  integer("fa_kv_cluster", k.kv_cluster);
  integer("fa_heads_per_band", k.heads_per_band);
  integer("fa_tail_splits", k.tail_splits);
}

void validate_fa_knobs(const FaKnobs& k, int seq_len, int num_heads, int num_ctas) {
  ka::MainloopSchedule schedule;
  if (!ka::parse_mainloop_schedule(k.schedule, &schedule))
    throw input_error("--fa-schedule", "unknown FlashAttention schedule '" + k.schedule + "'; use one of " +
                                           ka::kMainloopScheduleNames);
  ka::TileSchedulerKind tiles;
  if (!ka::parse_tile_scheduler(k.tile_scheduler, &tiles))
    throw input_error("--fa-tile-scheduler", "unknown tile scheduler '" + k.tile_scheduler + "'; use one of " +
                                                 ka::kTileSchedulerNames);
  ka::StoreCachePolicy store_cache;
  if (!ka::parse_store_cache_policy(k.store_cache, &store_cache))
    throw input_error("--fa-store-cache", "unknown store cache policy '" + k.store_cache + "'; use one of " +
                                              ka::kStoreCachePolicyNames);
  if (!ka::kv_cluster_size_is_built(k.kv_cluster))
    throw input_error("--fa-kv-cluster", std::to_string(k.kv_cluster) + " is not built; use 1 or 2");
  if (k.kv_cluster > 1) {
    if (schedule != ka::MainloopSchedule::kBaseline)
      throw input_error("--fa-kv-cluster", "clusters of 2 are built for --fa-schedule baseline only");
    if (seq_len % (k.kv_cluster * ka::TileShape::kBlockM) != 0)
      throw input_error("--fa-kv-cluster", "M = " + std::to_string(seq_len) + " must be a multiple of " +
                                               std::to_string(k.kv_cluster * ka::TileShape::kBlockM) +
                                               " with clusters of " + std::to_string(k.kv_cluster));
    if (num_ctas % k.kv_cluster != 0)
      throw input_error("--ctas", std::to_string(num_ctas) + " is not a multiple of --fa-kv-cluster " +
                                      std::to_string(k.kv_cluster));
  }
  if (k.heads_per_band < 0 || (k.heads_per_band > 0 && num_heads % k.heads_per_band != 0))
    throw input_error("--fa-heads-per-band", std::to_string(k.heads_per_band) + " does not divide --heads " +
                                                 std::to_string(num_heads) +
                                                 "; use 0 (auto: the L2 size) or a divisor");
  if (k.tail_splits < 1 || k.tail_splits > ka::kMaxTailKvSplits)
    throw input_error("--fa-tail-splits", std::to_string(k.tail_splits) + "; accepted: 1 (off) to " +
                                              std::to_string(ka::kMaxTailKvSplits));
  if (k.tail_splits > 1 && schedule != ka::MainloopSchedule::kBaseline)
    throw input_error("--fa-tail-splits", "the split tail is built for --fa-schedule baseline only");
}

ka::FlashAttentionConfig fa_kernel_config(const FaKnobs& k) {
  ka::FlashAttentionConfig config;
  ka::parse_mainloop_schedule(k.schedule, &config.schedule);  // validated by validate_fa_knobs
  ka::parse_tile_scheduler(k.tile_scheduler, &config.tile_scheduler);
  ka::parse_store_cache_policy(k.store_cache, &config.store_cache);
  config.kv_cluster_size = k.kv_cluster;
  config.heads_per_band = k.heads_per_band;
  config.tail_kv_splits = k.tail_splits;
  return config;
}

std::string describe_fa_knobs(const FaKnobs& k) {
  return (k.schedule == "baseline" ? "" : " schedule=" + k.schedule) + " tiles=" + k.tile_scheduler +
         (k.store_cache == "default" ? "" : " store_cache=" + k.store_cache) +
         (k.kv_cluster == 1 ? "" : " kv_cluster=" + std::to_string(k.kv_cluster)) +
         (k.heads_per_band == 1 ? ""
          : k.heads_per_band == 0 ? " heads_per_band=auto"
                                  : " heads_per_band=" + std::to_string(k.heads_per_band)) +
         (k.tail_splits == 1 ? "" : " tail_splits=" + std::to_string(k.tail_splits));
}

}  // namespace xs::attention
