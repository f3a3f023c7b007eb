// xstage attention layer (CUDA): the fa_a2a rank destinations (see fa_destinations.hpp).
#include "xs/attention/run/fa_destinations.hpp"

#include <cstring>

#include "xs/common/error.hpp"
#include "xs/backends/cuda/devices.hpp"

namespace xs::attention {

std::optional<std::string> rank_group_unavailable_reason(const runtime::Target& target, int device, int num_ranks) {
  if (target.kind != runtime::TargetKind::kPeer) return std::nullopt;
  const int num_gpus = runtime::count_devices();
  if (num_gpus == 1) return std::string("unavailable: one GPU");
  if (num_ranks > num_gpus)
    return "unavailable: the All-to-All over P = " + std::to_string(num_ranks) +
           " ranks puts rank r on GPU r; this node has " + std::to_string(num_gpus) + " GPUs";
  if (device >= num_ranks)
    throw input_error("--device", "the sender GPU " + std::to_string(device) + " is not one of the P = " +
                                      std::to_string(num_ranks) + " ranks of " + target.text +
                                      " (rank r drives GPU r): use --device 0.." + std::to_string(num_ranks - 1));
  const runtime::DeviceInfo info = runtime::query_device(device);
  const runtime::Topology topology = runtime::query_topology(num_gpus);
  for (int r = 0; r < num_ranks; ++r) {
    if (r == device) continue;
    runtime::Target peer{runtime::TargetKind::kPeer, r, "peer:" + std::to_string(r)};
    if (auto why = runtime::target_unavailable_reason(peer, info, topology)) return why;
  }
  return std::nullopt;
}

RankDestinations::RankDestinations(const runtime::Target& target, int device, int num_ranks,
                                   std::uint64_t bytes_per_rank)
    : bytes_per_rank_(bytes_per_rank) {
  if (target.kind != runtime::TargetKind::kPeer) {
    buffers_.push_back(std::make_unique<runtime::TargetBuffer>(target, device, bytes_per_rank * num_ranks));
    for (int r = 0; r < num_ranks; ++r) {
      buffer_of_.push_back(0);
      slices_.push_back(static_cast<std::uint8_t*>(buffers_.front()->device_ptr()) + r * bytes_per_rank);
    }
    remote_bytes_ = bytes_per_rank * num_ranks;
    description_ = "all " + std::to_string(num_ranks) + " rank slices in one " + target.text + " buffer";
    return;
  }
  for (int r = 0; r < num_ranks; ++r) {
    const runtime::Target where = r == device ? runtime::Target{runtime::TargetKind::kLocal, -1, "local"}
                                              : runtime::Target{runtime::TargetKind::kPeer, r, "peer:" + std::to_string(r)};
    buffers_.push_back(std::make_unique<runtime::TargetBuffer>(where, device, bytes_per_rank));
    buffer_of_.push_back(r);
    slices_.push_back(buffers_.back()->device_ptr());
    if (r != device) remote_bytes_ += bytes_per_rank;
  }
  description_ = "All-to-All: rank r's slice on GPU r (r = 0.." + std::to_string(num_ranks - 1) + "), the sender's (GPU " +
                 std::to_string(device) + ") local";
}

void RankDestinations::poison() {
  for (auto& b : buffers_) b->poison(b->bytes());
}

std::vector<std::vector<std::uint16_t>> RankDestinations::download() const {
  std::vector<std::vector<std::uint16_t>> out;
  std::vector<std::uint32_t> scratch;
  int fetched = -1;  // the buffer `words` holds (slices of one buffer are consecutive)
  const std::uint8_t* words = nullptr;
  for (std::size_t r = 0; r < slices_.size(); ++r) {
    const runtime::TargetBuffer& b = *buffers_[static_cast<std::size_t>(buffer_of_[r])];
    if (buffer_of_[r] != fetched) {
      words = reinterpret_cast<const std::uint8_t*>(b.host_words(b.bytes(), scratch));
      fetched = buffer_of_[r];
    }
    const std::uint8_t* at = words + (static_cast<const std::uint8_t*>(slices_[r]) -
                                      static_cast<const std::uint8_t*>(b.device_ptr()));
    std::vector<std::uint16_t> slice(bytes_per_rank_ / 2);
    std::memcpy(slice.data(), at, bytes_per_rank_);
    out.push_back(std::move(slice));
  }
  return out;
}

}  // namespace xs::attention
