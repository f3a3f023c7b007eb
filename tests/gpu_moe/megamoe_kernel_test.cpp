// xstage GPU moe tests: the persistent MegaMoE kernel on small problems built here (independent of
// src/xs/moe's builder): every schedule and epilogue mode against a CPU reference with the kernel's rounding
// points, destinations, pool and act poisoned before every launch (every expected slot written, nothing
// else), bitwise identity across schedules, targets, repeated launches and graph replays; the whole-phase
// launches; a planted ordering bug (Linear-2 tiles that skip their wait) that must fail the same check; bad
// shapes rejected before launch (exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include <cuda_runtime.h>

#include "../gpu_common/sm90_environment.hpp"
#include "xs/common/error.hpp"
#include "xs/kernels/moe/megamoe.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::moe {
namespace {

[[maybe_unused]] auto* const kEnv = ::testing::AddGlobalTestEnvironment(new xs::test::Sm90Environment);

constexpr std::uint16_t kPoison = 0xFFFF;
float bf16_to_float(std::uint16_t b) {
  const std::uint32_t w = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}
std::uint16_t float_to_bf16(float f) {
  std::uint32_t w;
  std::memcpy(&w, &f, 4);
  w += 0x7FFFu + ((w >> 16) & 1u);
  return static_cast<std::uint16_t>(w >> 16);
}

template <class T>
struct Dev {
  T* ptr = nullptr;
  std::size_t count = 0;
  explicit Dev(std::size_t n) : count(n) { XS_CUDA_CHECK(cudaMalloc(&ptr, n * sizeof(T) + 16)); }
  Dev(const std::vector<T>& host) : Dev(host.size()) {
    XS_CUDA_CHECK(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~Dev() { (void)cudaFree(ptr); }
  Dev(const Dev&) = delete;
  std::vector<T> get() const {
    std::vector<T> h(count);
    XS_CUDA_CHECK(cudaMemcpy(h.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

// One emulated rank's problem: random routing of P x T tokens to E = P x E_local experts (top-k distinct),
// this rank = rank 0; pool grouped by local expert, padded to 128 rows.
struct Problem {
  int h, inter, e_local, top_k, tokens, ranks;
  std::vector<std::uint16_t> arrival, w1, w2;
  std::vector<std::int32_t> pool_arrival, dst_rank, dst_slot;
  std::vector<float> weight;
  std::vector<std::uint32_t> row_block_expert, first_block;
  int num_row_blocks = 0, num_arrivals = 0;

  Problem(int h_, int inter_, int e_local_, int top_k_, int tokens_, int ranks_, std::uint64_t seed, bool skew)
      : h(h_), inter(inter_), e_local(e_local_), top_k(top_k_), tokens(tokens_), ranks(ranks_) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    const int experts = e_local * ranks;
    std::vector<std::vector<int>> pairs_of(e_local);  // index into (src, token, k) list
    std::vector<std::array<int, 3>> pair_info;
    std::vector<float> pair_weight;
    std::vector<int> arrival_of(ranks * tokens, -1);
    std::vector<std::array<int, 2>> arrivals;
    for (int src = 0; src < ranks; ++src)
      for (int t = 0; t < tokens; ++t) {
        std::vector<int> chosen;
        while (static_cast<int>(chosen.size()) < top_k) {
          // skew: expert 0 of this rank takes a large share
          int e = skew && (rng() % 3 == 0) ? 0 : static_cast<int>(rng() % experts);
          if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
        }
        for (int k = 0; k < top_k; ++k) {
          if (chosen[k] >= e_local) continue;
          int& a = arrival_of[src * tokens + t];
          if (a < 0) {
            a = static_cast<int>(arrivals.size());
            arrivals.push_back({src, t});
          }
          pairs_of[chosen[k]].push_back(static_cast<int>(pair_info.size()));
          pair_info.push_back({a, src, t * top_k + k});
          pair_weight.push_back(0.1f + 0.9f * (uni(rng) * 0.5f + 0.5f));
        }
      }
    num_arrivals = static_cast<int>(arrivals.size());
    first_block.push_back(0);
    for (int e = 0; e < e_local; ++e) {
      const int rows = static_cast<int>(pairs_of[e].size());
      const int blocks = (rows + 127) / 128;
      for (int b = 0; b < blocks; ++b) row_block_expert.push_back(static_cast<std::uint32_t>(e));
      for (int r = 0; r < blocks * 128; ++r) {
        if (r < rows) {
          const auto& pi = pair_info[pairs_of[e][r]];
          pool_arrival.push_back(pi[0]);
          dst_rank.push_back(pi[1]);
          dst_slot.push_back(pi[2]);
          weight.push_back(pair_weight[pairs_of[e][r]]);
        } else {
          pool_arrival.push_back(-1);
          dst_rank.push_back(-1);
          dst_slot.push_back(0);
          weight.push_back(0.0f);
        }
      }
      num_row_blocks += blocks;
      first_block.push_back(static_cast<std::uint32_t>(num_row_blocks));
    }
    auto fill = [&](std::vector<std::uint16_t>& v, std::size_t n, float scale) {
      v.resize(n);
      for (auto& x : v) x = float_to_bf16(uni(rng) * scale);
    };
    fill(arrival, static_cast<std::size_t>(num_arrivals) * h, 1.0f);
    fill(w1, static_cast<std::size_t>(e_local) * 2 * inter * h, 1.0f / std::sqrt(static_cast<float>(h)));
    fill(w2, static_cast<std::size_t>(e_local) * h * inter, 1.0f / std::sqrt(static_cast<float>(inter)));
  }
  std::size_t dst_elems() const { return static_cast<std::size_t>(tokens) * top_k * h; }

  // Reference of one pool row: act rounded to bf16 as the kernel does, output in double.
  std::vector<double> reference_row(int row) const {
    const int e = static_cast<int>(row_block_expert[row / 128]);
    const std::uint16_t* x = &arrival[static_cast<std::size_t>(pool_arrival[row]) * h];
    std::vector<float> act(inter);
    for (int q = 0; q < inter; ++q) {
      double g = 0, u = 0;
      const std::uint16_t* wg = &w1[(static_cast<std::size_t>(e) * 2 * inter + 2 * q) * h];
      const std::uint16_t* wu = wg + h;
      for (int k = 0; k < h; ++k) {
        g += double(bf16_to_float(x[k])) * bf16_to_float(wg[k]);
        u += double(bf16_to_float(x[k])) * bf16_to_float(wu[k]);
      }
      const double silu = g / (1.0 + std::exp(-g));
      act[q] = bf16_to_float(float_to_bf16(static_cast<float>(silu * u * weight[row])));
    }
    std::vector<double> out(h);
    for (int c = 0; c < h; ++c) {
      double s = 0;
      const std::uint16_t* w = &w2[(static_cast<std::size_t>(e) * h + c) * inter];
      for (int q = 0; q < inter; ++q) s += double(act[q]) * bf16_to_float(w[q]);
      out[c] = s;
    }
    return out;
  }
};

// Device-side copy of a problem plus destinations on one target (local HBM or mapped pinned host memory).
struct Launchable {
  const Problem& pr;
  Dev<std::uint16_t> arrival, w1, w2, pool, act;
  Dev<std::int32_t> pool_arrival, dst_rank, dst_slot;
  Dev<float> weight;
  Dev<std::uint32_t> rbe, first;
  Dev<std::uint32_t> sync, sync_l1, sync_l2;  // full launches; the phase launches count their epochs apart
  Dev<TileRecord> records;
  std::vector<void*> dst;        // device-visible
  std::vector<void*> host_dst;   // pinned host allocations (host target)
  bool host_target;
  Launchable(const Problem& p, bool host)
      : pr(p), arrival(p.arrival), w1(p.w1), w2(p.w2), pool(std::size_t(p.num_row_blocks) * 128 * p.h),
        act(std::size_t(p.num_row_blocks) * 128 * p.inter), pool_arrival(p.pool_arrival), dst_rank(p.dst_rank),
        dst_slot(p.dst_slot), weight(p.weight), rbe(p.row_block_expert), first(p.first_block),
        sync(2 + 2 * std::size_t(p.num_row_blocks)), sync_l1(sync.count), sync_l2(sync.count), records(std::size_t(p.num_row_blocks) * (2 * p.inter + p.h) / 128),
        host_target(host) {
    for (const auto* s : {&sync, &sync_l1, &sync_l2}) XS_CUDA_CHECK(cudaMemset(s->ptr, 0, s->count * 4));
    for (int r = 0; r < p.ranks; ++r) {
      void* d = nullptr;
      if (host && r != 0) {  // the rank's own rows stay in HBM; the P-1 others go through the target
        void* h = nullptr;
        XS_CUDA_CHECK(cudaHostAlloc(&h, p.dst_elems() * 2, cudaHostAllocMapped));
        XS_CUDA_CHECK(cudaHostGetDevicePointer(&d, h, 0));
        host_dst.push_back(h);
      } else {
        XS_CUDA_CHECK(cudaMalloc(&d, p.dst_elems() * 2));
        host_dst.push_back(nullptr);
      }
      dst.push_back(d);
    }
  }
  ~Launchable() {
    for (std::size_t r = 0; r < dst.size(); ++r) {
      if (host_dst[r]) (void)cudaFreeHost(host_dst[r]);
      else (void)cudaFree(dst[r]);
    }
  }
  // Destinations, pool and act to NaN bits: a launch that reads an intermediate before this launch wrote it
  // (or writes no row) shows up as wrong or unwritten output.
  void poison() {
    for (void* d : dst) XS_CUDA_CHECK(cudaMemset(d, 0xFF, pr.dst_elems() * 2));
    poison_intermediates();
  }
  void poison_intermediates() {
    XS_CUDA_CHECK(cudaMemset(pool.ptr, 0xFF, pool.count * 2));
    XS_CUDA_CHECK(cudaMemset(act.ptr, 0xFF, act.count * 2));
    XS_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void poison_dst() {
    for (void* d : dst) XS_CUDA_CHECK(cudaMemset(d, 0xFF, pr.dst_elems() * 2));
    XS_CUDA_CHECK(cudaDeviceSynchronize());
  }
  MegaMoeArgs args(ScheduleChoice sched, EpilogueMode mode, bool instrument, int block_n = 128) const {
    MegaMoeArgs a;
    a.block_n = block_n;
    a.hidden = pr.h;
    a.intermediate = pr.inter;
    a.num_experts = pr.e_local;
    a.top_k = pr.top_k;
    a.tokens_per_rank = pr.tokens;
    a.num_ranks = pr.ranks;
    a.num_row_blocks = pr.num_row_blocks;
    a.num_arrivals = pr.num_arrivals;
    a.mode = mode;
    a.schedule = sched;
    a.arrival = arrival.ptr;
    a.pool = pool.ptr;
    a.w1 = w1.ptr;
    a.w2 = w2.ptr;
    a.act = act.ptr;
    a.routing = RoutingTables{pool_arrival.ptr, dst_rank.ptr, dst_slot.ptr, weight.ptr, rbe.ptr, first.ptr};
    for (int r = 0; r < pr.ranks; ++r) {
      a.dst[r] = dst[r];
      a.dst_bytes[r] = pr.dst_elems() * 2;
    }
    a.sync_words = sync.ptr;
    a.sync_bytes = sync.count * 4;
    if (instrument) {
      a.records = records.ptr;
      a.records_bytes = records.count * sizeof(TileRecord);
    }
    return a;
  }
  std::vector<std::vector<std::uint16_t>> read_dst() const {
    std::vector<std::vector<std::uint16_t>> out(dst.size(), std::vector<std::uint16_t>(pr.dst_elems()));
    for (std::size_t r = 0; r < dst.size(); ++r)
      XS_CUDA_CHECK(cudaMemcpy(out[r].data(), dst[r], pr.dst_elems() * 2, cudaMemcpyDefault));
    return out;
  }
};

void run_once(const MegaMoeConfig& config, const MegaMoeArgs& a) {
  try {
    launch_megamoe(config, a, nullptr);
    XS_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const Error&) {
    const std::string why = megamoe_timeout_message();
    if (!why.empty()) ADD_FAILURE() << why;
    throw;
  }
}

struct Mismatches {
  std::uint64_t unwritten = 0, unexpected = 0, wrong = 0;
  double worst = 0;
  int checked = 0;
  bool any() const { return unwritten + unexpected + wrong > 0; }
};

// Counts what check_against_reference judges, without reporting (the planted-bug test expects mismatches).
Mismatches count_mismatches(const Problem& pr, const std::vector<std::vector<std::uint16_t>>& out, int row_step) {
  Mismatches m;
  std::vector<std::vector<char>> expected(pr.ranks, std::vector<char>(std::size_t(pr.tokens) * pr.top_k, 0));
  for (std::size_t r = 0; r < pr.dst_rank.size(); ++r)
    if (pr.dst_rank[r] >= 0) expected[pr.dst_rank[r]][pr.dst_slot[r]] = 1;
  for (int rank = 0; rank < pr.ranks; ++rank)
    for (std::size_t slot = 0; slot < expected[rank].size(); ++slot)
      for (int c = 0; c < pr.h; ++c) {
        const bool poison = out[rank][slot * pr.h + c] == kPoison;
        m.unwritten += expected[rank][slot] && poison;
        m.unexpected += !expected[rank][slot] && !poison;
      }
  for (int row = 0; row < pr.num_row_blocks * 128; row += row_step) {
    if (pr.dst_rank[row] < 0) continue;
    const auto ref = pr.reference_row(row);
    ++m.checked;
    for (int c = 0; c < pr.h; ++c) {
      const double got = bf16_to_float(out[pr.dst_rank[row]][std::size_t(pr.dst_slot[row]) * pr.h + c]);
      const double err = std::fabs(got - ref[c]);
      m.worst = std::max(m.worst, std::isfinite(err) ? err : INFINITY);
      m.wrong += !(err <= 1.6e-2 * std::fabs(ref[c]) + 1e-2);
    }
  }
  return m;
}

// Every expected slot holds a finite value within tolerance of the reference; every other slot is poison.
void check_against_reference(const Problem& pr, const std::vector<std::vector<std::uint16_t>>& out, int row_step) {
  std::vector<std::vector<char>> expected(pr.ranks, std::vector<char>(std::size_t(pr.tokens) * pr.top_k, 0));
  for (std::size_t r = 0; r < pr.dst_rank.size(); ++r)
    if (pr.dst_rank[r] >= 0) expected[pr.dst_rank[r]][pr.dst_slot[r]] = 1;
  std::uint64_t unwritten = 0, unexpected = 0;
  for (int rank = 0; rank < pr.ranks; ++rank)
    for (std::size_t slot = 0; slot < expected[rank].size(); ++slot)
      for (int c = 0; c < pr.h; ++c) {
        const bool poison = out[rank][slot * pr.h + c] == kPoison;
        if (expected[rank][slot] && poison) ++unwritten;
        if (!expected[rank][slot] && !poison) ++unexpected;
      }
  EXPECT_EQ(unwritten, 0u) << "expected Combine elements never written";
  EXPECT_EQ(unexpected, 0u) << "elements written outside the expected slots";
  double worst = 0;
  std::uint64_t wrong = 0;
  int checked = 0;
  for (int row = 0; row < pr.num_row_blocks * 128; row += row_step) {
    if (pr.dst_rank[row] < 0) continue;
    const auto ref = pr.reference_row(row);
    ++checked;
    for (int c = 0; c < pr.h; ++c) {
      const double got = bf16_to_float(out[pr.dst_rank[row]][std::size_t(pr.dst_slot[row]) * pr.h + c]);
      const double err = std::fabs(got - ref[c]);
      // bf16 output (rel 2^-8) plus fp32-accumulation-order and bf16-act differences.
      const double tol = 1.6e-2 * std::fabs(ref[c]) + 1e-2;
      worst = std::max(worst, err);
      if (!(err <= tol)) {
        if (wrong < 5)
          ADD_FAILURE() << "row " << row << " col " << c << ": got " << got << " reference " << ref[c];
        ++wrong;
      }
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(wrong, 0u) << "worst abs error " << worst;
}

struct Shape {
  int h, inter, e_local, top_k, tokens, ranks, ctas;
  bool skew;
  int block_n;
};

class MegaMoeKernel : public ::testing::TestWithParam<Shape> {};

TEST_P(MegaMoeKernel, EveryScheduleAndModeMatchesReferenceBitwiseIdentical) {
  const Shape s = GetParam();
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Problem pr(s.h, s.inter, s.e_local, s.top_k, s.tokens, s.ranks, seed, s.skew);
  ASSERT_GT(pr.num_row_blocks, 0);
  MegaMoeConfig config;
  config.num_ctas = s.ctas;
  config.timeout_cycles = 1ull << 32;  // ~2 s: a broken dependency fails fast
  const std::vector<ScheduleChoice> schedules = {
      {ScheduleKind::kInterleaved, 1, 1}, {ScheduleKind::kExpertWave, 1, 1}, {ScheduleKind::kExpertWave, 2, 1},
      {ScheduleKind::kSerial, 1, 1},      {ScheduleKind::kInterleaved, 1, 3}, {ScheduleKind::kInterleaved, 1, 64}};
  std::vector<std::vector<std::uint16_t>> first;
  for (bool host : {false, true}) {
    Launchable l(pr, host);
    for (const auto& sched : schedules)
      for (EpilogueMode mode : {EpilogueMode::kFused, EpilogueMode::kCompletionCoupled}) {
        SCOPED_TRACE(std::string(schedule_kind_name(sched.kind)) + " D=" + std::to_string(sched.lead_rows) +
                     " w=" + std::to_string(sched.experts_per_wave) + " " + epilogue_mode_name(mode) +
                     (host ? " host" : " local"));
        l.poison();
        run_once(config, l.args(sched, mode, /*instrument=*/true, s.block_n));
        const auto out = l.read_dst();
        if (first.empty()) {
          check_against_reference(pr, out, 5);
          first = out;
        } else {
          ASSERT_EQ(out.size(), first.size());
          for (std::size_t r = 0; r < out.size(); ++r)
            ASSERT_TRUE(out[r] == first[r]) << "rank " << r << " differs bitwise from the first variant";
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Small, MegaMoeKernel,
                         ::testing::Values(Shape{256, 128, 4, 2, 64, 4, 8, false, 128},
                                           Shape{512, 256, 8, 4, 256, 8, 0, true, 128},
                                           Shape{1024, 512, 4, 6, 256, 8, 66, true, 128},
                                           Shape{512, 256, 4, 4, 256, 8, 16, true, 256},
                                           Shape{768, 384, 8, 2, 512, 4, 0, false, 256}));

TEST(MegaMoeKernelRepeat, RepeatedLaunchesAndGraphReplaysAreIdentical) {
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Problem pr(512, 256, 8, 4, 256, 8, seed, true);
  Launchable l(pr, /*host=*/true);
  MegaMoeConfig config;
  config.num_ctas = 32;
  const MegaMoeArgs a = l.args({ScheduleKind::kInterleaved, 1, 2}, EpilogueMode::kFused, false);
  l.poison();
  run_once(config, a);
  const auto ref = l.read_dst();
  check_against_reference(pr, ref, 7);
  for (int i = 0; i < 3; ++i) {
    l.poison();
    run_once(config, a);
    EXPECT_TRUE(l.read_dst() == ref) << "launch " << i + 2 << " differs";
  }
  cudaStream_t stream;
  XS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  XS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  launch_megamoe(config, a, stream);
  launch_megamoe(config, a, stream);
  XS_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  XS_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 2; ++i) {
    l.poison();
    XS_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    XS_CUDA_CHECK(cudaStreamSynchronize(stream));
    EXPECT_TRUE(l.read_dst() == ref) << "graph replay " << i << " differs";
  }
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  (void)cudaStreamDestroy(stream);
}

// The whole-phase launches (KernelPhases) reproduce the full launch bitwise: Linear-2 alone on the act a
// full launch wrote, and Linear-1 alone on its pool (act poisoned first) followed by Linear-2 alone.
TEST(MegaMoeKernelPhases, LinearOneAndTwoAloneReproduceTheFullLaunch) {
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Problem pr(512, 256, 8, 4, 256, 8, seed, true);
  Launchable l(pr, /*host=*/false);
  MegaMoeConfig config;
  config.num_ctas = 24;
  MegaMoeArgs full = l.args({ScheduleKind::kSerial, 1, 1}, EpilogueMode::kFused, false);
  l.poison();
  run_once(config, full);
  const auto want = l.read_dst();
  check_against_reference(pr, want, 7);
  MegaMoeArgs l2 = full;
  l2.phases = KernelPhases::kLinear2;
  l2.sync_words = l.sync_l2.ptr;
  l.poison_dst();
  run_once(config, l2);
  EXPECT_TRUE(l.read_dst() == want) << "Linear-2 alone differs from the full launch";
  MegaMoeArgs l1 = full;
  l1.phases = KernelPhases::kLinear1;
  l1.sync_words = l.sync_l1.ptr;
  XS_CUDA_CHECK(cudaMemset(l.act.ptr, 0xFF, l.act.count * 2));
  l.poison_dst();
  run_once(config, l1);
  for (const auto& rank_rows : l.read_dst())  // Linear-1 alone writes act only, no Combine row
    EXPECT_TRUE(std::all_of(rank_rows.begin(), rank_rows.end(), [](std::uint16_t b) { return b == kPoison; }));
  run_once(config, l2);
  EXPECT_TRUE(l.read_dst() == want) << "Linear-1 alone then Linear-2 alone differs from the full launch";
  // Repeated phase launches keep their own epochs: a second round gives the same rows.
  l.poison_dst();
  run_once(config, l1);
  run_once(config, l2);
  EXPECT_TRUE(l.read_dst() == want) << "second phase round differs";
}

// A planted ordering bug: Linear-2 tiles that skip their wait on l1_done read act before the Linear-1 tiles
// of their row wrote it. With act poisoned before the launch the check above must fail; the same launch
// with the wait passes (the control). Interleaved D = 1 puts an L2 tile second in every CTA's order.
TEST(MegaMoeKernelOrderingBug, SkippedLinearTwoWaitFailsTheReferenceCheck) {
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Problem pr(1024, 512, 8, 4, 512, 8, seed, true);
  Launchable l(pr, /*host=*/false);
  MegaMoeConfig config;
  config.num_ctas = 66;
  config.timeout_cycles = 1ull << 32;
  for (ScheduleChoice sched : {ScheduleChoice{ScheduleKind::kInterleaved, 1, 1},
                               ScheduleChoice{ScheduleKind::kExpertWave, 1, 1}}) {
    SCOPED_TRACE(schedule_kind_name(sched.kind));
    const MegaMoeArgs a = l.args(sched, EpilogueMode::kFused, false);
    l.poison();
    config.fault_skip_l2_dependency_wait = false;
    run_once(config, a);
    const Mismatches control = count_mismatches(pr, l.read_dst(), 9);
    EXPECT_FALSE(control.any()) << "the control failed: wrong " << control.wrong << " unwritten "
                                << control.unwritten << " unexpected " << control.unexpected;
    l.poison();
    config.fault_skip_l2_dependency_wait = true;
    run_once(config, a);
    const Mismatches bug = count_mismatches(pr, l.read_dst(), 9);
    EXPECT_GT(bug.wrong, 0u) << "an L2 tile that skipped its dependency wait passed the reference check";
  }
}

TEST(MegaMoeKernelValidation, BadShapesAreRejectedBeforeLaunch) {
  const Problem pr(256, 128, 4, 2, 64, 4, 1, false);
  Launchable l(pr, false);
  MegaMoeConfig config;
  auto expect_input_error = [&](MegaMoeArgs a, const MegaMoeConfig& c, const char* field) {
    try {
      launch_megamoe(c, a, nullptr);
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  MegaMoeArgs a = l.args({ScheduleKind::kInterleaved, 1, 0}, EpilogueMode::kFused, false);
  expect_input_error(a, config, "lead_rows");
  a = l.args({ScheduleKind::kInterleaved, 1, 1}, EpilogueMode::kFused, false);
  a.hidden = 200;
  expect_input_error(a, config, "hidden");
  a = l.args({ScheduleKind::kInterleaved, 1, 1}, EpilogueMode::kFused, false);
  a.intermediate = 96;
  expect_input_error(a, config, "intermediate");
  a = l.args({ScheduleKind::kInterleaved, 1, 1}, EpilogueMode::kFused, false);
  a.dst_bytes[1] = 16;
  expect_input_error(a, config, "dst");
  MegaMoeConfig too_many;
  too_many.num_ctas = 100000;
  expect_input_error(l.args({ScheduleKind::kSerial, 1, 1}, EpilogueMode::kFused, false), too_many, "num_ctas");
}

}  // namespace
}  // namespace xs::kernels::moe

namespace xs::kernels::moe {
namespace {

// A Linear-2 dependency that can never be met (the epoch word claims 1000 finished launches, so this
// launch waits for l1_done >= 1001 x P1 while the counters only reach P1) must trap after the timeout with
// a report naming the flag. Runs in a re-executed child process: the trap poisons the CUDA context.
TEST(MegaMoeKernelDeathTest, UnmetDependencyTimesOutNamingItsFlag) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const Problem pr(256, 128, 4, 2, 64, 4, 7, false);
        Launchable l(pr, false);
        const std::uint32_t fake_epoch = 1000;
        XS_CUDA_CHECK(cudaMemcpy(l.sync.ptr, &fake_epoch, 4, cudaMemcpyHostToDevice));
        MegaMoeConfig config;
        config.num_ctas = 4;
        config.timeout_cycles = 1ull << 24;  // ~10 ms
        try {
          launch_megamoe(config, l.args({ScheduleKind::kSerial, 1, 1}, EpilogueMode::kFused, false), nullptr);
          XS_CUDA_CHECK(cudaDeviceSynchronize());
        } catch (const Error&) {
          std::fprintf(stderr, "%s\n", megamoe_timeout_message().c_str());
          std::fflush(stderr);
          std::_Exit(3);
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(3), "timeout waiting on 'l1_done'");
}

}  // namespace
}  // namespace xs::kernels::moe
