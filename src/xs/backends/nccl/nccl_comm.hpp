// xstage backends/nccl layer: NCCL communicators held by this process, for both launch models: one process driving
// several GPUs (ncclCommInitAll, rank i on devices[i]) or one rank made elsewhere (MPI: ncclCommInitRank with a
// unique id) adopted here. No NCCL header in this interface: ncclComm_t is `struct ncclComm*`.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

struct ncclComm;  // NCCL's opaque communicator

namespace xs::runtime {

// True when xs_backend_nccl was built with NCCL (XS_HAVE_NCCL).
bool nccl_built();
// ncclGetVersion of the running library and NCCL_VERSION_CODE of the headers built against; 0 without NCCL.
int nccl_runtime_version();
int nccl_header_version();

// The bytes of an ncclUniqueId (NCCL_UNIQUE_ID_BYTES = 128): rank 0 makes it, the launcher (MPI_Bcast) hands
// it to every rank, each calls NcclCommGroup::init_rank with it.
using NcclUniqueIdBytes = std::array<char, 128>;
// ncclGetUniqueId. Throws Error "nccl" (exit 3) on failure, input_error "target" when built without NCCL.
NcclUniqueIdBytes nccl_make_unique_id();

class NcclCommGroup {
 public:
  struct Member {
    ncclComm* comm = nullptr;
    int device = -1;      // CUDA device the rank drives (ncclCommCuDevice)
    int world_rank = -1;  // ncclCommUserRank
  };

  // One process, one rank per entry of `devices` (ncclCommInitAll). Throws input_error "devices" for a bad list,
  // Error "nccl" (exit 3) when NCCL fails, input_error "target" when built without NCCL.
  static std::shared_ptr<NcclCommGroup> init_all(const std::vector<int>& devices);
  // One rank of a communicator spanning processes (one process per GPU under MPI): ncclCommInitRank on
  // `device`. Every rank of the run calls it with the same id and world size. Throws input_error "rank" /
  // "devices" for bad arguments (validate_nccl_rank), Error "nccl" when NCCL fails (a missing rank hangs
  // in NCCL's bootstrap until its timeout: launch all ranks).
  static std::shared_ptr<NcclCommGroup> init_rank(const NcclUniqueIdBytes& id, int world_size, int rank, int device);
  // A communicator created by the caller; destroyed here only when `owned`.
  static std::shared_ptr<NcclCommGroup> adopt(ncclComm* comm, bool owned);

  ~NcclCommGroup();  // ncclCommDestroy of owned communicators; errors are not thrown from here
  NcclCommGroup(const NcclCommGroup&) = delete;
  NcclCommGroup& operator=(const NcclCommGroup&) = delete;

  int num_local() const { return static_cast<int>(members_.size()); }
  const Member& member(int local_idx) const { return members_.at(static_cast<std::size_t>(local_idx)); }
  int world_size() const { return world_size_; }
  // "ncclCommInitAll", "ncclCommInitRank" or "adopted" (recorded with results).
  std::string launch_model() const { return launch_model_; }

 private:
  NcclCommGroup() = default;
  std::vector<Member> members_;
  int world_size_ = 0;
  bool owned_ = false;
  std::string launch_model_;
};

}  // namespace xs::runtime
