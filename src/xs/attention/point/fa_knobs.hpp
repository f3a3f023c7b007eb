// xstage attention point: the FlashAttention kernel's knobs (--fa-*), declared once. The suite's and
// xstage-fa-point's flags fill one, the point spec carries it, the runner turns it into the kernel's config, and
// the result file's axes write and read it with to_json/from_json below, so the writer and reader cannot drift.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "xs/kernels/attention/config.hpp"

namespace xs::attention {

// Every variant of a point runs with these. Their defaults are the kernel's own (FlashAttentionConfig{}).
struct FaKnobs {
  std::string schedule = kernels::attention::mainloop_schedule_name(  // --fa-schedule: MainloopSchedule by name
      kernels::attention::FlashAttentionConfig{}.schedule);
  std::string tile_scheduler = kernels::attention::tile_scheduler_name(  // --fa-tile-scheduler: static | dynamic
      kernels::attention::FlashAttentionConfig{}.tile_scheduler);
  std::string store_cache = kernels::attention::store_cache_policy_name(  // --fa-store-cache: default | streaming
      kernels::attention::FlashAttentionConfig{}.store_cache);
  int kv_cluster = kernels::attention::FlashAttentionConfig{}.kv_cluster_size;  // --fa-kv-cluster: 1 | 2 (multicast)
  int heads_per_band = kernels::attention::FlashAttentionConfig{}.heads_per_band;  // --fa-heads-per-band: 0 = auto
  int tail_splits = kernels::attention::FlashAttentionConfig{}.tail_kv_splits;     // --fa-tail-splits: 1 = off
  friend bool operator==(const FaKnobs&, const FaKnobs&) = default;
};

// The knobs every point ran with before each knob existed (baseline, static, default, 1, 1, 1): what a result
// file's axes mean where a knob's key is absent.
FaKnobs fa_knobs_of_earlier_points();

// Axes keys fa_schedule, fa_tile_scheduler, fa_store_cache, fa_kv_cluster, fa_heads_per_band, fa_tail_splits,
// each only where it differs from fa_knobs_of_earlier_points(), so every earlier point keeps its key (the
// journal key, the config hash). heads_per_band 0 (auto) is written as 0; the value used is measured.heads_per_band.
void to_json(nlohmann::json& j, const FaKnobs& knobs);
// The knobs of a point's `axes` object (its other keys ignored), an absent key at fa_knobs_of_earlier_points(); a
// key of the wrong type is an input_error naming "axes.<key>".
void from_json(const nlohmann::json& axes, FaKnobs& knobs);

// Throws input_error naming the flag (--fa-schedule, --fa-tile-scheduler, --fa-store-cache, --fa-kv-cluster,
// --ctas, --fa-heads-per-band, --fa-tail-splits) where the knobs do not fit the point's M, heads and CTAs.
void validate_fa_knobs(const FaKnobs& knobs, int seq_len, int num_heads, int num_ctas);

// The kernel's config with these knobs (validated: validate_fa_knobs); num_ctas and the rest at their defaults.
kernels::attention::FlashAttentionConfig fa_kernel_config(const FaKnobs& knobs);

// The dry run's words: " schedule=<s>" (not baseline), " tiles=<t>", " store_cache=<c>" (not default),
// " kv_cluster=<n>" (not 1), " heads_per_band=<n|auto>" (not 1), " tail_splits=<n>" (not 1).
std::string describe_fa_knobs(const FaKnobs& knobs);

}  // namespace xs::attention
