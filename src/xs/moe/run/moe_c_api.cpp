// xstage moe: the C ABI of moe_c_api.h over launch_megamoe (one MegaMoeArgs per call).
#include "xs/moe/run/moe_c_api.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>

#include <cuda_runtime.h>

#include "xs/common/error.hpp"
#include "xs/kernels/moe/megamoe.hpp"

namespace km = xs::kernels::moe;

namespace {

static_assert(XS_MOE_MAX_RANKS == km::kMaxRanks, "moe_c_api.h's rank bound is the kernel's");

void write_message(const char* message, char* err, int err_len) noexcept {
  if (err == nullptr || err_len <= 0) return;
  const std::size_t n = std::min(std::strlen(message), static_cast<std::size_t>(err_len - 1));
  std::memcpy(err, message, n);
  err[n] = '\0';
}

struct Launch {
  km::MegaMoeConfig config;
  km::MegaMoeArgs args;
};

Launch to_launch(const XsMoeDesc* d) {
  if (d == nullptr) throw xs::input_error("desc", "a null descriptor; pass an XsMoeDesc");
  if (d->version != XS_MOE_C_API_VERSION)
    throw xs::input_error("version", "descriptor version " + std::to_string(d->version) + "; this library takes " +
                                         std::to_string(XS_MOE_C_API_VERSION));
  Launch l;
  l.config.num_ctas = d->num_ctas;
  l.config.cooperative_launch = d->cooperative != 0;
  km::MegaMoeArgs& a = l.args;
  a.hidden = d->hidden;
  a.intermediate = d->intermediate;
  a.num_experts = d->num_experts;
  a.top_k = d->top_k;
  a.tokens_per_rank = d->tokens_per_rank;
  a.num_ranks = d->num_ranks;
  a.num_row_blocks = d->num_row_blocks;
  a.num_arrivals = d->num_arrivals;
  a.block_n = d->block_n;
  if (d->precision != 0 && d->precision != 1)
    throw xs::input_error("precision", std::to_string(d->precision) + "; accepted: 0 bf16, 1 fp8");
  a.precision = d->precision == 1 ? km::Precision::kFp8 : km::Precision::kBf16;
  if (d->schedule < 0 || d->schedule > 2)
    throw xs::input_error("schedule", std::to_string(d->schedule) + "; accepted: 0 expert_wave, 1 interleaved, 2 serial");
  a.schedule.kind = static_cast<km::ScheduleKind>(d->schedule);
  a.schedule.experts_per_wave = d->experts_per_wave;
  a.schedule.lead_rows = d->lead_rows;
  a.mode = d->completion_coupled ? km::EpilogueMode::kCompletionCoupled : km::EpilogueMode::kFused;
  if (d->phases < 0 || d->phases > 2)
    throw xs::input_error("phases", std::to_string(d->phases) + "; accepted: 0 all, 1 linear1, 2 linear2");
  a.phases = static_cast<km::KernelPhases>(d->phases);
  a.arrival = d->arrival;
  a.pool = d->pool;
  a.w1 = d->w1;
  a.w2 = d->w2;
  a.act = d->act;
  a.arrival_scale = d->arrival_scale;
  a.pool_scale = d->pool_scale;
  a.w1_scale = d->w1_scale;
  a.w2_scale = d->w2_scale;
  a.act_scale = d->act_scale;
  a.routing = km::RoutingTables{d->pool_arrival,   d->pool_dst_rank,    d->pool_dst_slot,
                                d->pool_weight,    d->row_block_expert, d->expert_first_block};
  if (d->num_ranks < 1 || d->num_ranks > km::kMaxRanks)
    throw xs::input_error("num_ranks", std::to_string(d->num_ranks) + "; accepted: 1.." + std::to_string(km::kMaxRanks));
  for (int r = 0; r < d->num_ranks; ++r) {
    a.dst[r] = d->dst[r];
    a.dst_bytes[r] = d->dst_bytes[r];
  }
  a.sync_words = d->sync_words;
  a.sync_bytes = d->sync_bytes;
  return l;  // everything else: validate_megamoe inside launch_megamoe
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

extern "C" int xs_moe_launch(const XsMoeDesc* desc, void* stream, char* err, int err_len) noexcept {
  return guarded(err, err_len, [&] {
    const Launch l = to_launch(desc);
    km::launch_megamoe(l.config, l.args, static_cast<cudaStream_t>(stream));
  });
}

extern "C" std::uint64_t xs_moe_sync_bytes(int num_row_blocks) noexcept {
  return num_row_blocks < 0 ? 0 : km::SyncLayout{static_cast<std::uint32_t>(num_row_blocks)}.bytes();
}

extern "C" int xs_moe_timeout_message(char* out, int out_len) noexcept {
  return guarded(out, out_len, [&] { write_message(km::megamoe_timeout_message().c_str(), out, out_len); });
}

extern "C" int xs_moe_c_api_version(void) noexcept { return XS_MOE_C_API_VERSION; }
