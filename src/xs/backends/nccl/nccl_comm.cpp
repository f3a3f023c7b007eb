// xstage backends/nccl layer: NCCL communicators held by this process (see nccl_comm.hpp).
#include "xs/backends/nccl/nccl_comm.hpp"

#include <cstring>

#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/nccl/nccl_plan.hpp"

namespace xs::runtime {

bool nccl_built() {
#if defined(XS_HAVE_NCCL)
  return true;
#else
  return false;
#endif
}

int nccl_runtime_version() {
#if defined(XS_HAVE_NCCL)
  int v = 0;
  XS_NCCL_CHECK(ncclGetVersion(&v));
  return v;
#else
  return 0;
#endif
}

int nccl_header_version() {
#if defined(XS_HAVE_NCCL)
  return NCCL_VERSION_CODE;
#else
  return 0;
#endif
}

std::shared_ptr<NcclCommGroup> NcclCommGroup::init_all(const std::vector<int>& devices) {
#if defined(XS_HAVE_NCCL)
  validate_nccl_devices(devices, count_devices());
  std::shared_ptr<NcclCommGroup> group(new NcclCommGroup());
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  XS_NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
  group->owned_ = true;  // from here the destructor frees what was made, also if a query below throws
  group->launch_model_ = "ncclCommInitAll";
  group->world_size_ = static_cast<int>(devices.size());
  for (ncclComm_t c : comms) group->members_.push_back({c, -1, -1});
  for (Member& m : group->members_) {
    XS_NCCL_CHECK(ncclCommCuDevice(m.comm, &m.device));
    XS_NCCL_CHECK(ncclCommUserRank(m.comm, &m.world_rank));
  }
  return group;
#else
  (void)devices;
  throw input_error("target", nccl_built_without_reason());
#endif
}

NcclUniqueIdBytes nccl_make_unique_id() {
#if defined(XS_HAVE_NCCL)
  static_assert(sizeof(ncclUniqueId) == sizeof(NcclUniqueIdBytes), "NCCL_UNIQUE_ID_BYTES changed");
  ncclUniqueId id;
  XS_NCCL_CHECK(ncclGetUniqueId(&id));
  NcclUniqueIdBytes bytes;
  std::memcpy(bytes.data(), &id, bytes.size());
  return bytes;
#else
  throw input_error("target", nccl_built_without_reason());
#endif
}

std::shared_ptr<NcclCommGroup> NcclCommGroup::init_rank(const NcclUniqueIdBytes& id, int world_size, int rank,
                                                        int device) {
#if defined(XS_HAVE_NCCL)
  validate_nccl_rank(world_size, rank);
  validate_nccl_devices({device}, count_devices());
  ncclUniqueId nccl_id;
  std::memcpy(&nccl_id, id.data(), id.size());
  std::shared_ptr<NcclCommGroup> group(new NcclCommGroup());
  ncclComm_t comm = nullptr;
  {
    DeviceGuard guard(device);  // ncclCommInitRank binds the communicator to the current device
    XS_NCCL_CHECK(ncclCommInitRank(&comm, world_size, nccl_id, rank));
  }
  group->owned_ = true;
  group->launch_model_ = "ncclCommInitRank";
  group->world_size_ = world_size;
  group->members_.push_back({comm, device, rank});
  return group;
#else
  (void)id;
  (void)world_size;
  (void)rank;
  (void)device;
  throw input_error("target", nccl_built_without_reason());
#endif
}

std::shared_ptr<NcclCommGroup> NcclCommGroup::adopt(ncclComm* comm, bool owned) {
#if defined(XS_HAVE_NCCL)
  if (comm == nullptr) throw input_error("comm", "a null NCCL communicator; pass one from ncclCommInitRank");
  std::shared_ptr<NcclCommGroup> group(new NcclCommGroup());
  group->owned_ = owned;
  group->launch_model_ = "adopted";
  Member m{comm, -1, -1};
  XS_NCCL_CHECK(ncclCommCuDevice(comm, &m.device));
  XS_NCCL_CHECK(ncclCommUserRank(comm, &m.world_rank));
  XS_NCCL_CHECK(ncclCommCount(comm, &group->world_size_));
  group->members_.push_back(m);
  return group;
#else
  (void)comm;
  (void)owned;
  throw input_error("target", nccl_built_without_reason());
#endif
}

NcclCommGroup::~NcclCommGroup() {
#if defined(XS_HAVE_NCCL)
  if (!owned_) return;
  for (Member& m : members_)
    if (m.comm != nullptr) (void)ncclCommDestroy(m.comm);  // a destructor must not hide the first error
#endif
}

}  // namespace xs::runtime
