// xstage backends/nccl layer: NCCL symmetric-window destinations (see nccl_window.hpp, docs/nccl-window.md).
#include "xs/backends/nccl/nccl_window.hpp"

#include <map>
#include <mutex>
#include <utility>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "xs/common/error.hpp"
#include "xs/common/units.hpp"
#include "xs/kernels/common/nccl_lsa_pointers.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/cuda/device_buffer.hpp"
#include "xs/backends/cuda/devices.hpp"

#if defined(XS_HAVE_NCCL)
#include <nccl.h>
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#include <nccl_device.h>
#define XS_NCCL_DEVICE_API_HOST 1
#endif
#endif

namespace xs::runtime {
namespace {

#if defined(XS_HAVE_NCCL)
// "unavailable: <call> failed on NCCL <v> (<result>): <NCCL's last warning>".
[[maybe_unused]] std::string nccl_failure_reason(const char* call, ncclResult_t res, ncclComm_t comm) {
  std::string last;
  if (const char* text = ncclGetLastError(comm)) last = text;
  while (!last.empty() && (last.back() == '\n' || last.back() == ' ')) last.pop_back();
  return fmt::format("unavailable: {} failed on NCCL {} ({}){}", call, nccl_version_text(nccl_runtime_version()),
                     ncclGetErrorString(res), last.empty() ? "" : ": " + last);
}

// Restores the current device without throwing (destructors, error paths).
class QuietDeviceGuard {
 public:
  explicit QuietDeviceGuard(int device) {
    (void)cudaGetDevice(&previous_);
    (void)cudaSetDevice(device);
  }
  ~QuietDeviceGuard() { (void)cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};
#endif

#if defined(XS_NCCL_DEVICE_API_HOST)
// NCCL writes ncclDevComm and reads ncclDevCommRequirements with its own layout, which grew between 2.28 patch
// releases (GIN fields in 2.28.7). Zeroed slack behind each keeps a library newer than these headers inside
// memory we own; nccl_device_api_refusal already refuses a different major.minor.
struct PaddedDevComm {
  ncclDevComm comm;
  unsigned char slack[2048];
};
struct PaddedRequirements {
  ncclDevCommRequirements reqs;
  unsigned char slack[2048];
};
#endif

}  // namespace

struct NcclWindowTarget::DeviceComms {
#if defined(XS_NCCL_DEVICE_API_HOST)
  std::vector<PaddedDevComm> comms;
  bool created = false;
#endif
};

NcclWindowTarget::NcclWindowTarget(std::shared_ptr<const NcclCommGroup> comms, std::size_t bytes)
    : comms_(std::move(comms)), bytes_per_rank_(bytes), dev_comms_(std::make_unique<DeviceComms>()) {}

NcclWindowTarget::Outcome NcclWindowTarget::create(std::shared_ptr<const NcclCommGroup> comms,
                                                   std::size_t bytes_per_rank) {
  if (!comms || comms->num_local() < 1) throw input_error("comm", "no NCCL communicator given");
  const std::size_t bytes = nccl_window_bytes(bytes_per_rank);
#if !defined(XS_HAVE_NCCL)
  (void)bytes;
  return {nullptr, nccl_built_without_reason()};
#elif !defined(XS_NCCL_DEVICE_API_HOST)
  (void)bytes;
  return {nullptr, *nccl_device_api_refusal(NCCL_VERSION_CODE, nccl_runtime_version())};
#else
  const int runtime_version = nccl_runtime_version();
  if (auto why = nccl_device_api_refusal(NCCL_VERSION_CODE, runtime_version)) return {nullptr, *why};
  if (!kernels::nccl_device_api_compiled())
    return {nullptr, "unavailable: xs_kernels was compiled without nccl_device.h (no ncclGetLsaPointer kernel)"};

  const int n = comms->num_local();
  std::unique_ptr<NcclWindowTarget> t(new NcclWindowTarget(comms, bytes));  // frees whatever exists on return
  t->ranks_.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Rank& r = t->ranks_[static_cast<std::size_t>(i)];
    r.device = comms->member(i).device;
    r.world_rank = comms->member(i).world_rank;
    // ncclMemAlloc: cuMem memory with the granularity and handle type symmetric registration needs.
    DeviceGuard guard(r.device);
    if (const ncclResult_t res = ncclMemAlloc(&r.local_ptr, bytes); res != ncclSuccess) {
      r.local_ptr = nullptr;
      throw Error(ExitCode::kDeviceFailure, "nccl", "ncclMemAlloc",
                  fmt::format("ncclMemAlloc of {} on GPU {} failed: {}", format_bytes(static_cast<double>(bytes)),
                              r.device, ncclGetErrorString(res)));
    }
  }
  const ncclComm_t first = comms->member(0).comm;

  // Registration and device-communicator creation are collective: with several local ranks one group lets a
  // single thread drive them all (NCCL runs each communicator's part on its own thread at ncclGroupEnd). A
  // single rank calls NCCL directly, so a refusal comes back from the call that made it.
  const bool grouped = n > 1;
  const auto group_start = [&] { return grouped ? ncclGroupStart() : ncclSuccess; };
  const auto group_end = [&] { return grouped ? ncclGroupEnd() : ncclSuccess; };
  std::vector<ncclWindow_t> windows(static_cast<std::size_t>(n), nullptr);
  ncclResult_t res = group_start();
  for (int i = 0; i < n && res == ncclSuccess; ++i)
    res = ncclCommWindowRegister(comms->member(i).comm, t->ranks_[static_cast<std::size_t>(i)].local_ptr, bytes,
                                 &windows[static_cast<std::size_t>(i)], NCCL_WIN_COLL_SYMMETRIC);
  if (const ncclResult_t end = group_end(); res == ncclSuccess) res = end;
  for (int i = 0; i < n; ++i) t->ranks_[static_cast<std::size_t>(i)].window = windows[static_cast<std::size_t>(i)];
  if (res != ncclSuccess) return {nullptr, nccl_failure_reason("ncclCommWindowRegister", res, first)};

  for (int i = 0; i < n; ++i) {
    const ncclTeam_t lsa = ncclTeamLsa(comms->member(i).comm);
    t->ranks_[static_cast<std::size_t>(i)].lsa = {lsa.nRanks, lsa.rank, lsa.stride};
  }

  // A zeroed requirement list: no barriers, no resource buffers, no multimem; the window alone is enough for
  // ncclGetLsaPointer, and creation is what tells whether the communicator supports symmetric memory.
  t->dev_comms_->comms.resize(static_cast<std::size_t>(n));
  PaddedRequirements reqs{};
  res = group_start();
  for (int i = 0; i < n && res == ncclSuccess; ++i)
    res = ncclDevCommCreate(comms->member(i).comm, &reqs.reqs, &t->dev_comms_->comms[static_cast<std::size_t>(i)].comm);
  if (const ncclResult_t end = group_end(); res == ncclSuccess) res = end;
  if (res != ncclSuccess)
    return {nullptr, nccl_failure_reason("ncclDevCommCreate", res, first) +
                         nccl_one_local_rank_note(runtime_version, t->ranks_[0].lsa.num_ranks)};
  t->dev_comms_->created = true;

  // ncclGetLsaPointer dereferences the handle on the GPU: it must be device memory, which a symmetric
  // registration gives and the local-registration fallback (no symmetric support) does not.
  for (int i = 0; i < n; ++i) {
    const Rank& r = t->ranks_[static_cast<std::size_t>(i)];
    cudaPointerAttributes attributes{};
    const cudaError_t err = cudaPointerGetAttributes(&attributes, r.window);
    if (err != cudaSuccess || attributes.type != cudaMemoryTypeDevice) {
      (void)cudaGetLastError();
      return {nullptr, fmt::format("unavailable: the NCCL window handle of rank {} is not device memory (a "
                                   "non-symmetric registration), so ncclGetLsaPointer cannot read it",
                                   r.world_rank)};
    }
  }

  for (int i = 0; i < n; ++i) {
    Rank& r = t->ranks_[static_cast<std::size_t>(i)];
    DeviceGuard guard(r.device);
    DeviceBuffer table(sizeof(void*) * static_cast<std::size_t>(r.lsa.num_ranks));
    XS_CUDA_CHECK(kernels::launch_read_lsa_pointers({r.window, r.lsa.num_ranks, table.as<void*>()}, nullptr));
    XS_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<void*> lsa_ptrs(static_cast<std::size_t>(r.lsa.num_ranks), nullptr);
    copy_to_host(lsa_ptrs.data(), table.get(), table.bytes());
    r.dst = world_pointer_table(comms->world_size(), r.world_rank, r.lsa, lsa_ptrs);
  }
  return {std::move(t), ""};
#endif
}

NcclWindowTarget::~NcclWindowTarget() {
#if defined(XS_HAVE_NCCL)
  const int n = static_cast<int>(ranks_.size());
#if defined(XS_NCCL_DEVICE_API_HOST)
  if (dev_comms_ && dev_comms_->created)
    for (int i = n - 1; i >= 0; --i)
      (void)ncclDevCommDestroy(comms_->member(i).comm, &dev_comms_->comms[static_cast<std::size_t>(i)].comm);
#endif
  for (int i = n - 1; i >= 0; --i) {
    Rank& r = ranks_[static_cast<std::size_t>(i)];
    if (r.window != nullptr)
      (void)ncclCommWindowDeregister(comms_->member(i).comm, static_cast<ncclWindow_t>(const_cast<void*>(r.window)));
  }
  for (int i = n - 1; i >= 0; --i) {
    Rank& r = ranks_[static_cast<std::size_t>(i)];
    if (r.local_ptr == nullptr) continue;
    QuietDeviceGuard guard(r.device);
    (void)ncclMemFree(r.local_ptr);
  }
#endif
}

NcclTargetWindow::Outcome NcclTargetWindow::create(int device, int peer, std::size_t bytes) {
  const std::vector<int> devices = nccl_target_devices(device, peer);
  std::unique_ptr<NcclTargetWindow> w(new NcclTargetWindow());
  w->comms_ = NcclCommGroup::init_all(devices);
  NcclWindowTarget::Outcome made = NcclWindowTarget::create(w->comms_, bytes);
  if (!made.target) return {nullptr, made.unavailable_reason};
  w->target_ = std::move(made.target);
  // ncclCommInitAll: rank i drives devices[i], so the measuring GPU is rank 0 and the owner the last rank.
  const int owner_rank = static_cast<int>(devices.size()) - 1;
  for (int i = 0; i < w->target_->num_local(); ++i) {
    const NcclWindowTarget::Rank& r = w->target_->rank(i);
    if (r.device == device) w->store_ptr_ = r.dst.at(static_cast<std::size_t>(owner_rank));
    if (r.world_rank == owner_rank) w->owner_ptr_ = r.local_ptr;
  }
  if (w->store_ptr_ == nullptr || w->owner_ptr_ == nullptr)
    return {nullptr, fmt::format("unavailable: GPU {} is not in GPU {}'s NCCL LSA team (not load/store reachable)",
                                 peer, device)};
  w->owner_device_ = peer;
  return {std::move(w), ""};
}

std::optional<std::string> nccl_target_unavailable_reason(int device, int peer) {
#if !defined(XS_HAVE_NCCL)
  (void)device;
  (void)peer;
  return nccl_built_without_reason();
#else
  if (auto why = nccl_device_api_refusal(NCCL_VERSION_CODE, nccl_runtime_version())) return why;
  static std::mutex mutex;
  static std::map<std::pair<int, int>, std::optional<std::string>> probed;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(device, peer);
  if (auto it = probed.find(key); it != probed.end()) return it->second;
  std::optional<std::string> reason;
  try {
    NcclTargetWindow::Outcome probe = NcclTargetWindow::create(device, peer, 4096);
    if (!probe.window) reason = probe.unavailable_reason;
  } catch (const Error& e) {
    reason = std::string("unavailable: making the NCCL window failed: ") + e.what();
  }
  probed[key] = reason;
  return reason;
#endif
}

}  // namespace xs::runtime
