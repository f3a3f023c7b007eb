// xstage attention: the C ABI of fa_c_api.h over launch_flash_attention (one FlashAttentionArgs per call,
// built exactly as the bench's FA-only and heads-major variants build theirs: fa_runner.cpp).
#include "xs/attention/run/fa_c_api.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>

#include <cuda_runtime.h>

#include "xs/kernels/attention/flash_attention.hpp"
#include "xs/common/error.hpp"

namespace ka = xs::kernels::attention;

namespace {

void write_message(const char* message, char* err, int err_len) noexcept {
  if (err == nullptr || err_len <= 0) return;
  const std::size_t n = std::min(std::strlen(message), static_cast<std::size_t>(err_len - 1));
  std::memcpy(err, message, n);
  err[n] = '\0';
}

struct Launch {
  ka::FlashAttentionConfig config;
  ka::FlashAttentionArgs args;
};

Launch to_launch(const XsFaDesc* d) {
  if (d == nullptr) throw xs::input_error("desc", "a null descriptor; pass an XsFaDesc");
  if (d->version != XS_FA_C_API_VERSION)
    throw xs::input_error("version", "descriptor version " + std::to_string(d->version) + "; this library takes " +
                                         std::to_string(XS_FA_C_API_VERSION));
  Launch l;
  l.config.num_ctas = d->num_ctas;
  l.config.kv_cluster_size = d->kv_cluster_size;
  l.config.heads_per_band = d->heads_per_band;
  l.config.store_barrier = d->store_barrier != 0;
  l.config.tail_kv_splits = d->tail_kv_splits;  // 1..kMaxTailKvSplits: validate_flash_attention
  l.config.tail_split_units = d->tail_split_units;
  if (d->tile_scheduler != 0 && d->tile_scheduler != 1)
    throw xs::input_error("tile_scheduler", std::to_string(d->tile_scheduler) + "; accepted: 0 static, 1 dynamic");
  l.config.tile_scheduler = d->tile_scheduler == 0 ? ka::TileSchedulerKind::kStatic : ka::TileSchedulerKind::kDynamic;
  ka::FlashAttentionArgs& a = l.args;
  a.q = d->q;
  a.k = d->k;
  a.v = d->v;
  a.num_heads = d->num_heads;
  a.seq_len = d->seq_len;
  a.head_dim = d->head_dim;
  a.records = static_cast<ka::TileRecord*>(d->records);
  a.records_bytes = d->records_bytes;
  if (d->out_layout == XS_FA_OUT_HEADS_MAJOR) {
    a.mode = ka::EpilogueMode::kLocal;
    a.out = d->out;
    a.out_bytes = d->out_bytes;
  } else if (d->out_layout == XS_FA_OUT_ULYSSES) {
    if (d->num_ranks < 1 || d->num_ranks > ka::kMaxRanks)
      throw xs::input_error("num_ranks", std::to_string(d->num_ranks) + "; accepted: 1.." +
                                             std::to_string(ka::kMaxRanks));
    a.mode = ka::EpilogueMode::kFused;
    a.num_ranks = d->num_ranks;  // P dividing M: validate_flash_attention (every entry point runs it)
    const std::uint64_t per_rank = a.ulysses().dst_bytes_per_rank();
    if (d->out_bytes < per_rank * static_cast<std::uint64_t>(d->num_ranks))
      throw xs::input_error("out_bytes", std::to_string(d->out_bytes) + " bytes; the " + std::to_string(d->num_ranks) +
                                             " rank slices need " + std::to_string(per_rank * d->num_ranks));
    for (int r = 0; r < d->num_ranks; ++r) {
      a.dst[r] = d->out == nullptr ? nullptr : static_cast<std::uint8_t*>(d->out) + per_rank * r;
      a.dst_bytes[r] = per_rank;
    }
  } else {
    throw xs::input_error("out_layout", std::to_string(d->out_layout) + "; accepted: 0 heads-major, 1 ulysses");
  }
  return l;
}

// No exception crosses the C ABI: xs::Error keeps its exit code, anything else is a device failure (3).
template <typename F>
int guarded(char* err, int err_len, F&& f) noexcept {
  try {
    f();
    write_message("", err, err_len);
    return 0;
  } catch (const xs::Error& e) {
    write_message(e.what(), err, err_len);
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    write_message(e.what(), err, err_len);
    return static_cast<int>(xs::ExitCode::kDeviceFailure);
  } catch (...) {
    write_message("unknown exception", err, err_len);
    return static_cast<int>(xs::ExitCode::kDeviceFailure);
  }
}

}  // namespace

extern "C" int xs_fa_launch(const XsFaDesc* desc, void* stream, char* err, int err_len) noexcept {
  return guarded(err, err_len, [&] {
    const Launch l = to_launch(desc);
    ka::launch_flash_attention(l.config, l.args, static_cast<cudaStream_t>(stream));
  });
}

extern "C" int xs_fa_grid_size(const XsFaDesc* desc, char* err, int err_len) noexcept {
  int grid = 0;
  const int rc = guarded(err, err_len, [&] {
    const Launch l = to_launch(desc);
    ka::validate_flash_attention(l.config, l.args);
    grid = ka::flash_attention_grid_size(l.config, l.args);
  });
  return rc == 0 ? grid : -rc;
}

extern "C" int xs_fa_heads_per_band(const XsFaDesc* desc, char* err, int err_len) noexcept {
  int hb = 0;
  const int rc = guarded(err, err_len, [&] {
    const Launch l = to_launch(desc);
    ka::validate_flash_attention(l.config, l.args);
    hb = ka::flash_attention_heads_per_band(l.config, l.args);
  });
  return rc == 0 ? hb : -rc;
}

extern "C" std::uint64_t xs_fa_records_bytes(const XsFaDesc* desc) noexcept {
  try {
    const Launch l = to_launch(desc);
    return ka::flash_attention_records_bytes(l.config, l.args);  // validates; the grid sets the split tail's units
  } catch (...) {
    return 0;
  }
}

extern "C" int xs_fa_c_api_version(void) noexcept { return XS_FA_C_API_VERSION; }
