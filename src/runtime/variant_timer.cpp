// xstage runtime layer (CUDA): graph replay and rotating round-robin timing (see variant_timer.hpp).
#include "runtime/variant_timer.hpp"

#include <memory>
#include <string>

#include "common/error.hpp"
#include "runtime/check.hpp"

namespace xs::runtime {
namespace {

// One captured graph of `launches` back-to-back launches of a variant.
class VariantGraph {
 public:
  VariantGraph(const VariantEnqueue& enqueue, int launches, cudaStream_t stream) : launches_(launches) {
    XS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      for (int i = 0; i < launches; ++i) enqueue(stream);
    } catch (...) {
      cudaGraph_t g = nullptr;
      (void)cudaStreamEndCapture(stream, &g);
      if (g != nullptr) (void)cudaGraphDestroy(g);
      throw;
    }
    XS_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
    XS_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  ~VariantGraph() {
    if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  }
  VariantGraph(const VariantGraph&) = delete;
  VariantGraph& operator=(const VariantGraph&) = delete;
  // One replay timed with events: seconds per launch.
  double replay_s(cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, const StreamSync& sync) const {
    XS_CUDA_CHECK(cudaEventRecord(start, stream));
    XS_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
    XS_CUDA_CHECK(cudaEventRecord(stop, stream));
    sync(stream, "graph replay");
    float ms = 0;
    XS_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1e-3 / launches_;
  }

 private:
  int launches_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// The pair of timing events, destroyed on every path.
class EventPair {
 public:
  EventPair() {
    XS_CUDA_CHECK(cudaEventCreate(&start));
    try {
      XS_CUDA_CHECK(cudaEventCreate(&stop));
    } catch (...) {
      (void)cudaEventDestroy(start);
      throw;
    }
  }
  ~EventPair() {
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaEvent_t start = nullptr, stop = nullptr;
};

void plain_sync(cudaStream_t stream, const char* what) {
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) throw_cuda_error(err, what, __FILE__, __LINE__);
}

}  // namespace

std::vector<std::vector<double>> time_variants(const std::vector<VariantEnqueue>& variants, int launches_per_graph,
                                               int warmup, int repetitions, cudaStream_t stream,
                                               const StreamSync& synchronize, const ReplayBarrier& barrier) {
  if (variants.empty()) throw input_error("variants", "nothing to time");
  if (launches_per_graph < 1) throw input_error("launches_per_graph", "expected >= 1");
  if (warmup < 0) throw input_error("warmup", "expected >= 0");
  if (repetitions < 1) throw input_error("repetitions", "expected >= 1");
  const StreamSync sync = synchronize ? synchronize : StreamSync(plain_sync);
  std::vector<std::unique_ptr<VariantGraph>> graphs;
  for (const auto& v : variants) graphs.push_back(std::make_unique<VariantGraph>(v, launches_per_graph, stream));
  const EventPair events;
  std::vector<std::vector<double>> seconds(variants.size());
  for (int round = 0; round < warmup + repetitions; ++round)
    for (std::size_t i = 0; i < graphs.size(); ++i) {
      const std::size_t v = (i + static_cast<std::size_t>(round)) % graphs.size();
      if (barrier) barrier();
      const double t = graphs[v]->replay_s(stream, events.start, events.stop, sync);
      if (round >= warmup) seconds[v].push_back(t);
    }
  return seconds;
}

}  // namespace xs::runtime
