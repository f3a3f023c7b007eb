// xstage attention layer (CUDA): one fa_a2a point's device state (see fa_point_device.hpp).
#include "xs/attention/run/fa_point_device.hpp"

#include <string>

#include "xs/attention/point/fa_knobs.hpp"
#include "xs/common/error.hpp"

namespace xs::attention {

namespace ka = xs::kernels::attention;

FaPointDevice::FaPointDevice(const FaA2aPointSpec& sp, const runtime::Target& target, const FaExchange* exchange,
                             FaA2aPointResult& r)
    : spec(sp),
      ex(exchange),
      guard(sp.device),
      config(fa_kernel_config(sp.knobs)),  // validated before
      prob(sp.num_heads, sp.seq_len, sp.head_dim, r.seed = sp.seed != 0 ? sp.seed : fresh_seed()),
      s(stream.get()) {
  config.num_ctas = spec.num_ctas;
  // Argument blocks. The fused / cc output's rank slices live where the target puts them (fa_destinations.hpp).
  prob.fill_inputs(base);
  base.num_ranks = spec.num_ranks;
  u = base.ulysses();
  per_rank = u.dst_bytes_per_rank();
  if (ex != nullptr && ex->window_bytes < per_rank * static_cast<std::uint64_t>(spec.num_ranks))
    throw input_error("exchange", "the receive windows hold " + std::to_string(ex->window_bytes) + " bytes; this point "
                                  "needs P x " + std::to_string(per_rank));
  // One-sender emulation: every slice where the target puts it. Exchange: each rank's window, this sender's block.
  if (ex == nullptr) dst = std::make_unique<RankDestinations>(target, spec.device, spec.num_ranks, per_rank);
  r.remote_bytes = ex != nullptr ? static_cast<double>(per_rank) * (spec.num_ranks - 1)
                                 : static_cast<double>(dst->remote_bytes());
  r.destinations = ex != nullptr ? ex->description : dst->describe();
  // FA-only, layout-matched (issue 13 item 1): the fused epilogue itself (same [token][H][d] rank slices,
  // same 16-byte stores, same bytes) into a local HBM buffer, so T_fused - T_FA isolates the remote path.
  fa_out = DeviceBuffer(per_rank * spec.num_ranks);
  fa = fused = cc = base;
  fa.mode = fused.mode = ka::EpilogueMode::kFused;
  cc.mode = ka::EpilogueMode::kCompletionCoupled;
  for (int rank = 0; rank < spec.num_ranks; ++rank) {
    fa.dst[rank] = static_cast<std::uint8_t*>(fa_out.get()) + rank * per_rank;
    fused.dst[rank] = cc.dst[rank] =
        ex != nullptr ? static_cast<std::uint8_t*>(ex->peer_windows[rank]) + ex->world_rank * per_rank : dst->slice(rank);
    fa.dst_bytes[rank] = fused.dst_bytes[rank] = cc.dst_bytes[rank] = per_rank;
  }
  // The former FA-only, heads-major [H][M][d] (kLocal), kept as a labelled extra (the layout bias).
  out = DeviceBuffer(prob.bytes());
  heads_major = base;
  heads_major.mode = ka::EpilogueMode::kLocal;
  heads_major.out = out.get();
  heads_major.out_bytes = out.bytes();
  for (const ka::FlashAttentionArgs* a : {&fa, &fused, &cc, &heads_major}) ka::validate_flash_attention(config, *a);
  r.num_ctas = ka::flash_attention_grid_size(config, base);
  r.num_tiles = static_cast<int>(base.num_tiles());
  r.heads_per_band = ka::flash_attention_heads_per_band(config, base);
  r.volume_bytes = static_cast<double>(prob.bytes());
  r.fa_only_layout = "ulysses";
  // Only where every slice lives in one buffer (local, host); an All-to-All has no single destination.
  contiguous = dst != nullptr ? dst->contiguous_base() : nullptr;
}

}  // namespace xs::attention
