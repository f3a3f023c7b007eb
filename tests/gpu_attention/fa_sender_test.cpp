// xstage GPU attention tests: the sender-side rounds (attention/run/fa_sender.hpp): one value per kept round and
// variant, the warmup rounds dropped, the variants visited round-robin from a rotating start, every launch's
// records handed to the sink fully written, the optional copy after each launch enqueued and timed.
#include "xs/attention/run/fa_sender.hpp"

#include <gtest/gtest.h>

#include "xs/attention/run/fa_device.hpp"
#include "xs/attention/run/fa_burst.hpp"
#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/cuda/stream.hpp"

namespace xs::attention {
namespace {

namespace ka = xs::kernels::attention;

TEST(SenderSide, RoundRobinRoundsOfInstrumentedLaunches) {
  const FaProblem p(2, 1024, 128, fresh_seed());
  DeviceBuffer out(p.bytes());
  DeviceBuffer copy_dst(p.bytes());
  ka::FlashAttentionConfig config;
  ka::FlashAttentionArgs a;
  p.fill_inputs(a);
  a.out = out.get();
  a.out_bytes = out.bytes();
  const std::uint64_t records_bytes = std::uint64_t{a.num_tiles()} * 2 * sizeof(ka::TileRecord);
  auto launch = [&](cudaStream_t st, ka::TileRecord* rec) {
    ka::FlashAttentionArgs ia = a;
    ia.records = rec;
    ia.records_bytes = records_bytes;
    ka::launch_flash_attention(config, ia, st);
  };
  int copies = 0;
  auto copy = [&](cudaStream_t st) {
    ++copies;
    XS_CUDA_CHECK(cudaMemcpyAsync(copy_dst.get(), out.get(), out.bytes(), cudaMemcpyDeviceToDevice, st));
  };
  runtime::Stream stream;
  std::vector<std::size_t> visits;
  std::size_t incomplete = 0;
  const auto t = time_sender_side({{launch, {}}, {launch, copy}}, a.num_tiles(), 3, 1, 2, stream.get(),
                                  [&](std::size_t v, const std::vector<ka::TileRecord>& recs) {
                                    visits.push_back(v);
                                    for (const auto& r : recs) incomplete += r.written != 1;
                                    EXPECT_GT(launch_sender_span_s(recs.data(), recs.size()), 0);
                                  });
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].size(), 2u) << "two kept rounds, the warmup round dropped";
  EXPECT_EQ(t[1].size(), 2u);
  for (const auto& v : t)
    for (double s : v) EXPECT_GT(s, 0);
  // Round 1 (the first kept) starts at variant 1, round 2 at variant 0; 3 launches each.
  EXPECT_EQ(visits, (std::vector<std::size_t>{1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(incomplete, 0u) << "every tile's two records written in every launch";
  EXPECT_EQ(copies, 3 * 3) << "the copy after each launch of variant 1, warmup round included";
  EXPECT_THROW(time_sender_side({{launch, {}}}, a.num_tiles(), 0, 0, 1, stream.get()), Error);
}

}  // namespace
}  // namespace xs::attention
