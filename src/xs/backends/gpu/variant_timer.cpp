// xstage backends/gpu layer (CUDA): graph replay and rotating round-robin timing (see variant_timer.hpp).
#include "xs/backends/gpu/variant_timer.hpp"

#include <memory>
#include <optional>
#include <string>

#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/cuda/stream.hpp"

namespace xs::runtime {

CapturedGraph::CapturedGraph(const std::function<void(cudaStream_t, int)>& enqueue, int launches,
                             cudaStream_t stream)
    : launches_(launches) {
  XS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < launches; ++i) enqueue(stream, i);
  } catch (...) {
    cudaGraph_t g = nullptr;
    (void)cudaStreamEndCapture(stream, &g);
    if (g != nullptr) (void)cudaGraphDestroy(g);
    throw;
  }
  XS_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
  try {
    XS_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  } catch (...) {
    (void)cudaGraphDestroy(graph_);
    throw;
  }
}

CapturedGraph::~CapturedGraph() {
  if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
}

void CapturedGraph::launch(cudaStream_t stream) const { XS_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

namespace {

// One captured graph of `launches` back-to-back launches of a variant, replayed timed with events.
class VariantGraph {
 public:
  VariantGraph(const VariantEnqueue& enqueue, int launches, cudaStream_t stream)
      : graph_([&enqueue](cudaStream_t st, int) { enqueue(st); }, launches, stream) {}
  // One replay timed with events: seconds per launch.
  double replay_s(cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, const StreamSync& sync) const {
    XS_CUDA_CHECK(cudaEventRecord(start, stream));
    graph_.launch(stream);
    XS_CUDA_CHECK(cudaEventRecord(stop, stream));
    sync(stream, "graph replay");
    float ms = 0;
    XS_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1e-3 / graph_.launches();
  }

 private:
  CapturedGraph graph_;
};

void plain_sync(cudaStream_t stream, const char* what) {
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) cuda_check::throw_cuda_error(err, what, __FILE__, __LINE__);
}

}  // namespace

bench::RoundReplay graph_replay(const std::vector<VariantEnqueue>& variants, int launches_per_graph,
                                cudaStream_t stream, const StreamSync& synchronize) {
  if (variants.empty()) throw input_error("variants", "nothing to time");
  if (launches_per_graph < 1) throw input_error("launches_per_graph", "expected >= 1");
  struct Graphs {
    std::vector<std::unique_ptr<VariantGraph>> graphs;
    std::optional<Event> start, stop;  // created after the captures
  };
  auto g = std::make_shared<Graphs>();
  for (const auto& v : variants) g->graphs.push_back(std::make_unique<VariantGraph>(v, launches_per_graph, stream));
  g->start.emplace();
  g->stop.emplace();
  const StreamSync sync = synchronize ? synchronize : StreamSync(plain_sync);
  return [g, stream, sync](std::size_t v, bool) {
    return g->graphs.at(v)->replay_s(stream, g->start->get(), g->stop->get(), sync);
  };
}

std::vector<std::vector<double>> time_variants(const std::vector<VariantEnqueue>& variants, int launches_per_graph,
                                               int warmup, int repetitions, cudaStream_t stream,
                                               const StreamSync& synchronize, const ReplayBarrier& barrier) {
  if (variants.empty()) throw input_error("variants", "nothing to time");
  if (launches_per_graph < 1) throw input_error("launches_per_graph", "expected >= 1");
  bench::check_round_robin(variants.size(), warmup, repetitions);
  const bench::RoundReplay replay = graph_replay(variants, launches_per_graph, stream, synchronize);
  return bench::time_round_robin(variants.size(), warmup, repetitions, replay, barrier);
}

}  // namespace xs::runtime
