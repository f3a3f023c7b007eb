// xstage kernels layer (attention): the FlashAttention launch's argument checks (validate_flash_attention and
// the part select_kernel relies on, check_kernel_choice). Host only; touches no device state.
#include <cstdint>
#include <string>

#include "xs/kernels/attention/flash_attention_internal.hpp"
#include "xs/common/error.hpp"

namespace xs::kernels::attention {

namespace {

bool aligned16(const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) == 0; }

}  // namespace

void check_kernel_choice(const FlashAttentionConfig& config, const FlashAttentionArgs& a) {
  if (!head_dim_is_built(a.head_dim))
    throw input_error("head_dim", "head dim " + std::to_string(a.head_dim) + " is not built; use 64 or 128");
  if (static_cast<int>(a.mode) < 0 || static_cast<int>(a.mode) >= kNumEpilogueModes)
    throw input_error("mode", "unknown epilogue mode");
  if (static_cast<int>(config.schedule) < 0 || static_cast<int>(config.schedule) >= kNumMainloopSchedules)
    throw input_error("schedule", "unknown mainloop schedule " + std::to_string(static_cast<int>(config.schedule)) +
                                      "; built: " + kMainloopScheduleNames);
  if (!kv_cluster_size_is_built(config.kv_cluster_size))
    throw input_error("kv_cluster_size", "K/V cluster size " + std::to_string(config.kv_cluster_size) +
                                             " is not built; use 1 or 2");
  if (config.tail_kv_splits < 1 || config.tail_kv_splits > kMaxTailKvSplits)
    throw input_error("tail_kv_splits", std::to_string(config.tail_kv_splits) + "; accepted: 1 (off) to " +
                                            std::to_string(kMaxTailKvSplits));
  if (config.tail_kv_splits > 1 && a.seq_len > 0 && a.seq_len % TileShape::kBlockN == 0 &&
      (a.seq_len / TileShape::kBlockN) % config.tail_kv_splits != 0) {
    const int kv_tiles = a.seq_len / TileShape::kBlockN;
    std::string accepted = "1";
    for (int n = 2; n <= kMaxTailKvSplits; ++n)
      if (kv_tiles % n == 0) accepted += ", " + std::to_string(n);
    throw input_error("tail_kv_splits", std::to_string(config.tail_kv_splits) + " pieces do not divide the " +
                                            std::to_string(kv_tiles) + " KV tiles of M = " + std::to_string(a.seq_len) +
                                            " (pieces are equally long); accepted here: " + accepted);
  }
  if (config.tail_kv_splits > 1 && config.schedule != MainloopSchedule::kBaseline)
    throw input_error("tail_kv_splits", "the split tail is built for the baseline schedule only, not " +
                                            std::string(mainloop_schedule_name(config.schedule)));
  if (config.kv_cluster_size > 1 && config.schedule != MainloopSchedule::kBaseline)
    throw input_error("kv_cluster_size", "K/V clusters of " + std::to_string(config.kv_cluster_size) +
                                             " are built for the baseline schedule only, not " +
                                             mainloop_schedule_name(config.schedule));
}

void validate_flash_attention(const FlashAttentionConfig& config, const FlashAttentionArgs& a) {
  check_kernel_choice(config, a);
  if (a.seq_len <= 0 || a.seq_len % TileShape::kBlockM != 0)
    throw input_error("seq_len", "M = " + std::to_string(a.seq_len) + " must be a positive multiple of " +
                                     std::to_string(TileShape::kBlockM));
  if (a.num_heads <= 0 || static_cast<long long>(a.num_heads) * a.seq_len >= (1ll << 31))
    throw input_error("num_heads", "need 0 < num_heads and num_heads * M < 2^31 (TMA row coordinate)");
  if (config.num_ctas < 0) throw input_error("num_ctas", "must be >= 0 (0: one per SM)");
  if (!a.q || !a.k || !a.v || !aligned16(a.q) || !aligned16(a.k) || !aligned16(a.v))
    throw input_error("q/k/v", "Q, K, V must be non-null and 16-byte aligned");
  const std::uint64_t tensor_bytes = static_cast<std::uint64_t>(a.num_heads) * a.seq_len * a.head_dim * 2;
  if (a.mode == EpilogueMode::kLocal) {
    if (!a.out || !aligned16(a.out)) throw input_error("out", "FA-only mode needs a 16-byte aligned output");
    if (a.out_bytes < tensor_bytes)
      throw input_error("out", "output holds " + std::to_string(a.out_bytes) + " bytes, the launch writes " +
                                   std::to_string(tensor_bytes));
  } else {
    if (a.num_ranks < 1 || a.num_ranks > kMaxRanks)
      throw input_error("num_ranks", "P = " + std::to_string(a.num_ranks) + " must be in [1, " +
                                         std::to_string(kMaxRanks) + "]");
    if (a.seq_len % a.num_ranks != 0)
      throw input_error("num_ranks", "P = " + std::to_string(a.num_ranks) + " does not divide M = " +
                                         std::to_string(a.seq_len));
    const UlyssesLayout u = a.ulysses();
    if (a.dst_head_offset < 0 || u.dst_head_offset + u.num_heads > u.dst_num_heads)
      throw input_error("dst_head_offset", "this sender's heads [" + std::to_string(a.dst_head_offset) + ", " +
                                               std::to_string(a.dst_head_offset + a.num_heads) +
                                               ") do not fit a destination row of " +
                                               std::to_string(u.dst_num_heads) + " heads");
    for (int r = 0; r < a.num_ranks; ++r) {
      if (!a.dst[r] || !aligned16(a.dst[r]))
        throw input_error("dst", "dst[" + std::to_string(r) + "] must be non-null and 16-byte aligned");
      if (a.dst_bytes[r] < u.dst_bytes_per_rank())
        throw input_error("dst", "dst[" + std::to_string(r) + "] holds " + std::to_string(a.dst_bytes[r]) +
                                     " bytes, rank " + std::to_string(r) + " receives [" +
                                     std::to_string(u.tokens_per_rank()) + " tokens][" +
                                     std::to_string(u.dst_num_heads) + " heads][" + std::to_string(a.head_dim) +
                                     "] bf16 = " +
                                     std::to_string(u.dst_bytes_per_rank()));
    }
  }
  if (a.records != nullptr && reinterpret_cast<std::uintptr_t>(a.records) % alignof(TileRecord) != 0)
    throw input_error("records", "instrumentation buffer must be " + std::to_string(alignof(TileRecord)) +
                                     "-byte aligned");
  // (With a split tail the launch needs more: flash_attention_records_bytes, checked at launch.)
  if (a.records != nullptr && a.records_bytes < std::uint64_t{a.num_tiles()} * 2 * sizeof(TileRecord))
    throw input_error("records", "instrumentation buffer needs 2 records per tile = " +
                                     std::to_string(std::uint64_t{a.num_tiles()} * 2 * sizeof(TileRecord)) + " bytes");
  if (config.tail_split_units < 0)
    throw input_error("tail_split_units", std::to_string(config.tail_split_units) +
                                              "; accepted: 0 (one per cluster of the grid) or a positive count");
  if (static_cast<int>(config.tile_scheduler) < 0 || static_cast<int>(config.tile_scheduler) >= kNumTileSchedulerKinds)
    throw input_error("tile_scheduler", "unknown tile scheduler; built: " + std::string(kTileSchedulerNames));
  if (static_cast<int>(config.store_cache) < 0 || static_cast<int>(config.store_cache) >= kNumStoreCachePolicies)
    throw input_error("store_cache", "unknown store cache policy; built: " + std::string(kStoreCachePolicyNames));
  if (config.heads_per_band < 0 || (config.heads_per_band > 0 && a.num_heads % config.heads_per_band != 0))
    throw input_error("heads_per_band", std::to_string(config.heads_per_band) + " does not divide the " +
                                            std::to_string(a.num_heads) + " heads; accepted: 0 (auto) or a divisor");
  if (config.kv_cluster_size > 1) {
    const int cs = config.kv_cluster_size;
    if (a.seq_len % (cs * TileShape::kBlockM) != 0)
      throw input_error("seq_len", "M = " + std::to_string(a.seq_len) + " must be a multiple of " +
                                       std::to_string(cs * TileShape::kBlockM) + " with K/V clusters of " +
                                       std::to_string(cs) + " (the cluster's CTAs share a head)");
    if (config.num_ctas % cs != 0)
      throw input_error("num_ctas", std::to_string(config.num_ctas) + " CTAs is not a multiple of the K/V cluster size " +
                                        std::to_string(cs));
  }
}

}  // namespace xs::kernels::attention
