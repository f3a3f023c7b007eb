// xstage attention layer (CUDA): sender-side rounds of instrumented launches (see fa_sender.hpp).
#include "xs/attention/run/fa_sender.hpp"

#include <algorithm>

#include "xs/attention/run/fa_burst.hpp"
#include "xs/attention/run/fa_device.hpp"
#include "xs/bench/point_harness.hpp"
#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/cuda/stream.hpp"
#include "xs/backends/gpu/variant_timer.hpp"

namespace xs::attention {

namespace ka = xs::kernels::attention;

std::vector<std::vector<double>> time_sender_side(const std::vector<SenderVariant>& variants, std::uint32_t num_record_slots,
                                                  int launches_per_round, int warmup, int repetitions,
                                                  cudaStream_t stream, const SenderLaunchSink& sink,
                                                  const std::function<void()>& round_barrier) {
  if (variants.empty() || launches_per_round < 1 || warmup < 0 || repetitions < 1)
    throw input_error("sender-side rounds", "need a variant, >= 1 launch per round, warmup >= 0, repetitions >= 1");
  const std::size_t L = static_cast<std::size_t>(launches_per_round);
  const std::size_t per_launch = std::size_t{num_record_slots} * 2;
  DeviceBuffer rec(L * per_launch * sizeof(ka::TileRecord));
  auto* rec_dev = static_cast<ka::TileRecord*>(rec.get());
  std::vector<ka::TileRecord> host(L * per_launch);
  std::vector<runtime::Event> start(L), stop(L);
  // One round's replay of variant v: L launches, one synchronization, then (kept rounds) the sender-side spans.
  auto replay = [&](std::size_t v, bool kept) {
    const SenderVariant& var = variants[v];
    XS_CUDA_CHECK(cudaMemsetAsync(rec.get(), 0, rec.bytes(), stream));
    if (round_barrier) {  // every rank starts this variant's L launches together
      sync_checked(stream, "sender-side round (clear records)");
      round_barrier();
    }
    for (std::size_t l = 0; l < L; ++l) {
      var.enqueue(stream, rec_dev + l * per_launch);
      if (var.after) {
        XS_CUDA_CHECK(cudaEventRecord(start[l].get(), stream));
        var.after(stream);
        XS_CUDA_CHECK(cudaEventRecord(stop[l].get(), stream));
      }
    }
    sync_checked(stream, "sender-side round");  // the one remote-visibility barrier after L launches
    if (!kept) return 0.0;
    XS_CUDA_CHECK(cudaMemcpy(host.data(), rec.get(), rec.bytes(), cudaMemcpyDeviceToHost));
    double sum_s = 0;
    for (std::size_t l = 0; l < L; ++l) {
      sum_s += launch_sender_span_s(host.data() + l * per_launch, per_launch);
      if (var.after) {
        float ms = 0;
        XS_CUDA_CHECK(cudaEventElapsedTime(&ms, start[l].get(), stop[l].get()));
        sum_s += ms * 1e-3;
      }
      if (sink)
        sink(v, std::vector<ka::TileRecord>(host.begin() + static_cast<std::ptrdiff_t>(l * per_launch),
                                            host.begin() + static_cast<std::ptrdiff_t>((l + 1) * per_launch)));
    }
    return sum_s / static_cast<double>(L);
  };
  return bench::time_round_robin(variants.size(), warmup, repetitions, replay);  // rotating, as variant_timer
}

void replay_instrumented_graph(const SenderVariant& variant, std::uint32_t num_record_slots, int launches_per_round,
                               int warmup, int repetitions, cudaStream_t stream,
                               const std::function<void(std::size_t, const std::vector<ka::TileRecord>&)>& sink) {
  if (!variant.enqueue || variant.after || launches_per_round < 1 || warmup < 0 || repetitions < 1)
    throw input_error("instrumented graph", "need one kernel-only variant, >= 1 launch per round, warmup >= 0, "
                                            "repetitions >= 1");
  const std::size_t L = static_cast<std::size_t>(launches_per_round);
  const std::size_t per_launch = std::size_t{num_record_slots} * 2;
  DeviceBuffer rec(L * per_launch * sizeof(ka::TileRecord));
  auto* rec_dev = static_cast<ka::TileRecord*>(rec.get());
  const runtime::CapturedGraph graph(
      [&](cudaStream_t st, int l) { variant.enqueue(st, rec_dev + static_cast<std::size_t>(l) * per_launch); },
      launches_per_round, stream);
  std::vector<ka::TileRecord> host(L * per_launch);
  std::size_t kept = 0;
  for (int round = 0; round < warmup + repetitions; ++round) {
    XS_CUDA_CHECK(cudaMemsetAsync(rec.get(), 0, rec.bytes(), stream));
    graph.launch(stream);
    sync_checked(stream, "instrumented graph replay");
    if (round < warmup) continue;
    XS_CUDA_CHECK(cudaMemcpy(host.data(), rec.get(), rec.bytes(), cudaMemcpyDeviceToHost));
    for (std::size_t l = 0; l < L; ++l)
      sink(kept++, std::vector<ka::TileRecord>(host.begin() + static_cast<std::ptrdiff_t>(l * per_launch),
                                               host.begin() + static_cast<std::ptrdiff_t>((l + 1) * per_launch)));
  }
}

}  // namespace xs::attention
