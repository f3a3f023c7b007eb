// xstage GPU attention tests: the wgmma kernel against the GPU reference on several shapes (head dims 128
// and 64), all three epilogue modes, outputs poisoned first, the Ulysses destination layout checked element by element;
// bad shapes rejected before launch; instrumentation records filled. Every MainloopSchedule (config.hpp) runs
// the same checks, and its FA-only output must equal the baseline's bit for bit (same instructions on the same
// data in each warpgroup; only the issue order between warpgroups differs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "xs/attention/reference/bf16.hpp"
#include "xs/attention/reference/cpu_reference.hpp"
#include "xs/attention/run/fa_device.hpp"
#include "xs/kernels/attention/flash_attention.hpp"
#include "xs/common/error.hpp"

namespace xs::attention {
namespace {

namespace ka = xs::kernels::attention;

struct Case {
  int heads, seq_len;
  float q_stddev;
  int num_ctas;  // 0: one per SM
  int num_ranks;
  int head_dim = 128;
};

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return "H" + std::to_string(c.heads) + "_M" + std::to_string(c.seq_len) + "_q" +
         std::to_string(static_cast<int>(c.q_stddev)) + "_ctas" + std::to_string(c.num_ctas) + "_P" +
         std::to_string(c.num_ranks) + "_d" + std::to_string(c.head_dim);
}

// The Ulysses destinations of one fused or completion-coupled run against FA-only's output `local` (same problem).
DestinationCheck check_destinations(const Case& c, const UlyssesSpec& spec, const std::vector<std::uint16_t>& local,
                                    const std::vector<std::vector<std::uint16_t>>& dst) {
  ka::FlashAttentionArgs a;
  a.num_heads = c.heads;
  a.seq_len = c.seq_len;
  a.head_dim = c.head_dim;
  a.num_ranks = spec.num_ranks;
  a.dst_num_heads = spec.dst_num_heads;
  a.dst_head_offset = spec.dst_head_offset;
  std::vector<const std::uint16_t*> ptrs;
  for (const auto& d : dst) ptrs.push_back(d.data());
  return check_ulysses_destination(a.ulysses(), local.data(), ptrs);
}

// All three modes of one schedule on fresh inputs: FA-only against the reference, fused and completion-coupled
// against FA-only's output in the Ulysses layout, instrumentation records ordered (compare_to: when given,
// FA-only must equal it bit for bit: the baseline's output on the same problem). Fatal failures end only
// this call (ASSERT in a void helper).
void check_all_modes(const Case& c, const FaProblem& p, ka::MainloopSchedule schedule,
                                           const std::vector<std::uint16_t>* compare_to) {
  SCOPED_TRACE(std::string("schedule ") + ka::mainloop_schedule_name(schedule));
  ka::FlashAttentionConfig config;
  config.num_ctas = c.num_ctas;
  config.schedule = schedule;
  config.timeout_cycles = 1ull << 32;  // ~2 s: a hang fails the test quickly, naming the barrier

  const std::vector<std::uint16_t> local = run_fa_local(p, config, nullptr);
  ASSERT_EQ(count_poison(local.data(), local.size()), 0u) << "FA-only left output elements unwritten";
  const int step = std::max(1, c.seq_len / 512);
  const std::vector<float> ref = run_gpu_reference(p, step, nullptr);
  const ErrorStats e = compare_sampled_rows(local.data(), c.heads, c.seq_len, c.head_dim, step, ref.data());
  EXPECT_LE(e.rel_error, 1e-2) << e.describe();
  EXPECT_LE(e.max_abs_error, 0.05) << e.describe();
  if (compare_to != nullptr) {
    std::size_t num_differ = 0, first = local.size();
    for (std::size_t i = 0; i < local.size(); ++i)
      if (local[i] != (*compare_to)[i]) {
        ++num_differ;
        first = std::min(first, i);
      }
    EXPECT_EQ(num_differ, 0u) << "FA-only differs from the baseline schedule's bits, first at element " << first;
  }

  // Compact single-sender destinations, and a P-sender group where this rank is sender 1.
  for (UlyssesSpec spec : {UlyssesSpec{c.num_ranks, 0, 0}, UlyssesSpec{c.num_ranks, c.heads * 2, c.heads}}) {
    for (ka::EpilogueMode mode : {ka::EpilogueMode::kFused, ka::EpilogueMode::kCompletionCoupled}) {
      SCOPED_TRACE(std::string(ka::epilogue_mode_name(mode)) + " dst_num_heads " + std::to_string(spec.dst_num_heads));
      std::vector<ka::TileRecord> records;
      const auto dst = run_fa_ulysses(p, config, mode, spec, nullptr, &records);
      const DestinationCheck chk = check_destinations(c, spec, local, dst);
      EXPECT_EQ(chk.num_checked, local.size());
      EXPECT_EQ(chk.num_wrong, 0u) << chk.first_wrong << " (" << chk.num_unwritten << " unwritten)";
      EXPECT_EQ(chk.num_foreign_written, 0u);
      // Instrumentation: one record per (tile, consumer), ordered stamps; per CTA and consumer, its tiles
      // numbered 0, 1, ... (cta_tile_idx) whichever tile scheduler ran.
      std::map<std::pair<std::uint32_t, std::size_t>, std::vector<std::uint32_t>> tiles_of;
      for (std::size_t i = 0; i < records.size(); ++i) tiles_of[{records[i].cta_idx, i % 2}].push_back(records[i].cta_tile_idx);
      for (auto& [key, idx] : tiles_of) {
        std::sort(idx.begin(), idx.end());
        for (std::size_t n = 0; n < idx.size(); ++n)
          ASSERT_EQ(idx[n], n) << "CTA " << key.first << " consumer " << key.second << ": its tiles are not 0, 1, ...";
        EXPECT_LT(key.first, 1024u);
      }
      for (const auto& r : records) {
        ASSERT_EQ(r.written, 1u);
        EXPECT_LT(r.qloop_start_cycles, r.qloop_end_cycles);
        EXPECT_LE(r.qloop_end_cycles, r.store_start_cycles);
        EXPECT_LE(r.store_start_cycles, r.store_end_cycles);
        if (mode == ka::EpilogueMode::kCompletionCoupled) {
          EXPECT_LE(r.store_end_cycles, r.fence_end_cycles);
        }
        EXPECT_EQ(r.num_kv_tiles, static_cast<std::uint32_t>(c.seq_len / 128));
      }
    }
  }
}

class FlashAttention : public ::testing::TestWithParam<Case> {};

TEST_P(FlashAttention, AllModesMatchReferenceAndLayout) {
  const Case c = GetParam();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const FaProblem p(c.heads, c.seq_len, c.head_dim, seed, c.q_stddev);
  check_all_modes(c, p, ka::MainloopSchedule::kBaseline, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Shapes, FlashAttention,
                         ::testing::Values(Case{1, 256, 1.0f, 0, 1}, Case{1, 128, 1.0f, 0, 1},
                                           Case{2, 1024, 1.0f, 0, 4}, Case{8, 1024, 3.0f, 0, 8},
                                           Case{3, 4096, 1.0f, 0, 8}, Case{8, 4096, 2.0f, 0, 2},
                                           Case{4, 1024, 1.0f, 5, 8}, Case{1, 4096, 4.0f, 1, 16},
                                           // head dim 64 (the second built instantiation)
                                           Case{1, 256, 1.0f, 0, 1, 64}, Case{8, 1024, 3.0f, 0, 8, 64},
                                           Case{3, 4096, 1.0f, 0, 8, 64}, Case{1, 4096, 4.0f, 1, 16, 64}),
                         name_of);

// The ping-pong schedules (opt-in; pingpong.cuh): every mode against the reference and the layout, and FA-only
// bit-identical to the baseline on the same fresh inputs. Shapes chosen for the turn protocol: one KV tile (no
// loop step: kPingPong takes no turn at all), odd and even numbers of KV tiles, one CTA running every tile
// of several heads (turns carried across many tile boundaries), a CTA count that leaves CTAs with different
// tile counts, sharp softmax (q_stddev 4: the running-max rescale), both head dims. (The kernel supports
// only M a multiple of 128; other M are refused before launch, FlashAttentionValidation.)
struct ScheduleCase {
  Case shape;
  ka::MainloopSchedule schedule;
};
std::string schedule_case_name(const ::testing::TestParamInfo<ScheduleCase>& info) {
  return std::string(ka::mainloop_schedule_name(info.param.schedule)) + "_" +
         name_of(::testing::TestParamInfo<Case>(info.param.shape, info.index));
}
std::vector<ScheduleCase> schedule_cases() {
  const Case shapes[] = {Case{1, 128, 1.0f, 0, 1},      Case{1, 384, 1.0f, 0, 1},  Case{2, 640, 2.0f, 3, 2},
                         Case{3, 1024, 1.0f, 1, 8},     Case{8, 4096, 3.0f, 0, 8}, Case{4, 2048, 4.0f, 5, 16},
                         Case{1, 128, 1.0f, 0, 1, 64},  Case{2, 640, 2.0f, 3, 2, 64},
                         Case{8, 4096, 3.0f, 0, 8, 64}, Case{3, 1024, 1.0f, 1, 8, 64}};
  std::vector<ScheduleCase> cases;
  for (int sch = 1; sch < ka::kNumMainloopSchedules; ++sch)
    for (const Case& c : shapes) cases.push_back({c, static_cast<ka::MainloopSchedule>(sch)});
  return cases;
}

class FlashAttentionSchedule : public ::testing::TestWithParam<ScheduleCase> {};

TEST_P(FlashAttentionSchedule, AllModesMatchReferenceLayoutAndBaselineBits) {
  const ScheduleCase sc = GetParam();
  const Case& c = sc.shape;
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const FaProblem p(c.heads, c.seq_len, c.head_dim, seed, c.q_stddev);
  ka::FlashAttentionConfig base;
  base.num_ctas = c.num_ctas;
  base.timeout_cycles = 1ull << 32;
  const std::vector<std::uint16_t> baseline = run_fa_local(p, base, nullptr);
  check_all_modes(c, p, sc.schedule, &baseline);
}

INSTANTIATE_TEST_SUITE_P(Schedules, FlashAttentionSchedule, ::testing::ValuesIn(schedule_cases()), schedule_case_name);

// The tile schedulers (config.hpp TileSchedulerKind): the same tile is the same instructions on the same data
// whichever CTA runs it, so dynamic FA-only output equals static bit for bit; three dynamic launches in a row
// (the last CTA of each zeroes the ticket counter for the next) each write every element; few CTAs draw many
// tickets.
TEST(FlashAttentionTileScheduler, DynamicEqualsStaticBitsAndBackToBackLaunchesAreComplete) {
  for (const Case& c : {Case{8, 1024, 2.0f, 0, 8}, Case{3, 2048, 1.0f, 7, 8}, Case{2, 640, 3.0f, 1, 2},
                        Case{8, 1024, 2.0f, 5, 8, 64}}) {
    SCOPED_TRACE(name_of(::testing::TestParamInfo<Case>(c, 0)));
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const FaProblem p(c.heads, c.seq_len, c.head_dim, seed, c.q_stddev);
    ka::FlashAttentionConfig config;
    config.num_ctas = c.num_ctas;
    config.timeout_cycles = 1ull << 32;
    config.tile_scheduler = ka::TileSchedulerKind::kStatic;
    const std::vector<std::uint16_t> fixed = run_fa_local(p, config, nullptr);
    ASSERT_EQ(count_poison(fixed.data(), fixed.size()), 0u);
    config.tile_scheduler = ka::TileSchedulerKind::kDynamic;
    for (int launch = 0; launch < 3; ++launch) {
      const std::vector<std::uint16_t> drawn = run_fa_local(p, config, nullptr);
      ASSERT_EQ(count_poison(drawn.data(), drawn.size()), 0u) << "launch " << launch << " left elements unwritten";
      std::size_t num_differ = 0;
      for (std::size_t i = 0; i < drawn.size(); ++i) num_differ += drawn[i] != fixed[i];
      EXPECT_EQ(num_differ, 0u) << "launch " << launch;
    }
  }
}

// The store cache policy (config.hpp StoreCachePolicy) changes only the cache operator of the epilogue's
// stores: FA-only and the fused destinations hold the same bits with streaming stores as with default ones.
TEST(FlashAttentionStoreCache, StreamingStoresWriteTheSameBits) {
  for (const Case& c : {Case{8, 1024, 2.0f, 0, 8}, Case{3, 2048, 1.0f, 7, 4, 64}}) {
    SCOPED_TRACE(name_of(::testing::TestParamInfo<Case>(c, 0)));
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const FaProblem p(c.heads, c.seq_len, c.head_dim, seed, c.q_stddev);
    ka::FlashAttentionConfig config;
    config.num_ctas = c.num_ctas;
    config.timeout_cycles = 1ull << 32;
    const UlyssesSpec spec{c.num_ranks, 0, 0};
    const std::vector<std::uint16_t> local = run_fa_local(p, config, nullptr);
    std::vector<ka::TileRecord> records, records_cs;
    const auto fused = run_fa_ulysses(p, config, ka::EpilogueMode::kFused, spec, nullptr, &records);
    config.store_cache = ka::StoreCachePolicy::kStreaming;
    const std::vector<std::uint16_t> local_cs = run_fa_local(p, config, nullptr);
    const auto fused_cs = run_fa_ulysses(p, config, ka::EpilogueMode::kFused, spec, nullptr, &records_cs);
    // The kernel says which store it took (the bits alone cannot tell a policy that never reached it).
    ASSERT_FALSE(records.empty());
    for (const auto& r : records) ASSERT_EQ(r.streaming_stores, 0u) << "default launch took the streaming stores";
    for (const auto& r : records_cs) ASSERT_EQ(r.streaming_stores, 1u) << "streaming never reached the kernel";
    ASSERT_EQ(count_poison(local_cs.data(), local_cs.size()), 0u) << "streaming FA-only left elements unwritten";
    EXPECT_TRUE(local_cs == local) << "streaming FA-only differs from the default stores' bits";
    ASSERT_EQ(fused_cs.size(), fused.size());
    for (std::size_t r = 0; r < fused.size(); ++r) EXPECT_TRUE(fused_cs[r] == fused[r]) << "rank slice " << r;
  }
}

// K/V clusters of 2 (config.hpp kv_cluster_size): each CTA computes the same instructions on the same K/V
// bits, only who loads which half differs, so FA-only and fused outputs equal the unclustered kernel's bit
// for bit, static and dynamic, three launches in a row (the dynamic counter reset and rank 0's hand-off of
// every unit to rank 1). The records prove the clusters ran: the two m-blocks of a unit ran on the two CTAs
// of one cluster, tile 2u + r on cluster rank r (= blockIdx.x % 2 for a cluster of 2 along x).
TEST(FlashAttentionKvCluster, ClustersOf2WriteTheSameBitsAndPairTheMBlocksOfAHead) {
  for (const Case& c : {Case{8, 1024, 2.0f, 0, 8}, Case{3, 2048, 1.0f, 6, 4}, Case{2, 512, 3.0f, 2, 2},
                        Case{8, 1024, 2.0f, 10, 8, 64}}) {
    SCOPED_TRACE(name_of(::testing::TestParamInfo<Case>(c, 0)));
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const FaProblem p(c.heads, c.seq_len, c.head_dim, seed, c.q_stddev);
    ka::FlashAttentionConfig config;
    config.num_ctas = c.num_ctas;
    config.timeout_cycles = 1ull << 32;
    const UlyssesSpec spec{c.num_ranks, 0, 0};
    config.tile_scheduler = ka::TileSchedulerKind::kStatic;
    const std::vector<std::uint16_t> local = run_fa_local(p, config, nullptr);
    const auto fused = run_fa_ulysses(p, config, ka::EpilogueMode::kFused, spec, nullptr);
    const auto cc = run_fa_ulysses(p, config, ka::EpilogueMode::kCompletionCoupled, spec, nullptr);
    ASSERT_EQ(count_poison(local.data(), local.size()), 0u);
    config.kv_cluster_size = 2;
    for (auto kind : {ka::TileSchedulerKind::kStatic, ka::TileSchedulerKind::kDynamic}) {
      config.tile_scheduler = kind;
      SCOPED_TRACE(ka::tile_scheduler_name(kind));
      for (int launch = 0; launch < 3; ++launch) {
        const std::vector<std::uint16_t> local2 = run_fa_local(p, config, nullptr);
        ASSERT_EQ(count_poison(local2.data(), local2.size()), 0u) << "launch " << launch << " left elements unwritten";
        std::size_t num_differ = 0;
        for (std::size_t i = 0; i < local2.size(); ++i) num_differ += local2[i] != local[i];
        EXPECT_EQ(num_differ, 0u) << "FA-only, launch " << launch;
      }
      std::vector<ka::TileRecord> records;
      const auto fused2 = run_fa_ulysses(p, config, ka::EpilogueMode::kFused, spec, nullptr, &records);
      ASSERT_EQ(fused2.size(), fused.size());
      for (std::size_t r = 0; r < fused.size(); ++r) EXPECT_TRUE(fused2[r] == fused[r]) << "rank slice " << r;
      const auto cc2 = run_fa_ulysses(p, config, ka::EpilogueMode::kCompletionCoupled, spec, nullptr);
      ASSERT_EQ(cc2.size(), cc.size());
      for (std::size_t r = 0; r < cc.size(); ++r) EXPECT_TRUE(cc2[r] == cc[r]) << "completion-coupled slice " << r;
      // The pairing below proves the clusters only under the dynamic scheduler: with static tiles and an even
      // grid the unclustered kernel would pair them the same way.
      const std::uint32_t num_tiles = static_cast<std::uint32_t>(c.heads * (c.seq_len / 128));
      ASSERT_EQ(records.size(), 2u * num_tiles);
      for (std::uint32_t t = 0; t < num_tiles; t += 2) {
        const ka::TileRecord& even = records[2 * t];
        const ka::TileRecord& odd = records[2 * (t + 1)];
        ASSERT_EQ(even.written, 1u);
        ASSERT_EQ(odd.written, 1u);
        EXPECT_EQ(even.cta_idx % 2, 0u) << "tile " << t << " not on rank 0";
        EXPECT_EQ(odd.cta_idx, even.cta_idx + 1) << "tiles " << t << ", " << t + 1 << " not on one cluster";
        EXPECT_EQ(odd.cta_tile_idx, even.cta_tile_idx) << "the cluster's CTAs fell out of step";
      }
    }
  }
}

// Split tail (config.hpp tail_kv_splits): the last round's tiles run in pieces over disjoint KV ranges and the
// piece that arrives last merges every piece's partial in piece order. FA-only matches the reference as closely
// as the whole-tile kernel does (not its bits: another rounding of P), is the same bits launch after launch
// (the merge order does not depend on arrival; the arrival counters are back to zero after every launch),
// fused and completion-coupled destinations equal FA-only's bits; the records cover every (tile, KV tile)
// exactly once per consumer, with one storing record per tile. Static and dynamic, clusters 1 and 2, d 64/128.
TEST(FlashAttentionSplitTail, PiecesMergeToTheReferenceInEveryModeLaunchAfterLaunch) {
  struct SplitCase {
    Case c;
    int cluster;
  };
  // M of 12 and 24 KV tiles, so 2, 3 and 4 pieces all divide them (pieces are equally long).
  for (const SplitCase& sc : {SplitCase{Case{8, 1536, 2.0f, 0, 8}, 1}, SplitCase{Case{3, 3072, 1.0f, 7, 4}, 1},
                              SplitCase{Case{8, 1536, 2.0f, 10, 8, 64}, 1}, SplitCase{Case{8, 1536, 2.0f, 0, 8}, 2},
                              SplitCase{Case{3, 3072, 3.0f, 6, 4}, 2}, SplitCase{Case{8, 1536, 2.0f, 10, 8, 64}, 2}}) {
    const Case& c = sc.c;
    SCOPED_TRACE(name_of(::testing::TestParamInfo<Case>(c, 0)) + " cluster " + std::to_string(sc.cluster));
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const FaProblem p(c.heads, c.seq_len, c.head_dim, seed, c.q_stddev);
    const int step = std::max(1, c.seq_len / 512);
    const std::vector<float> ref = run_gpu_reference(p, step, nullptr);
    ka::FlashAttentionConfig config;
    config.num_ctas = c.num_ctas;
    config.timeout_cycles = 1ull << 32;
    config.kv_cluster_size = sc.cluster;
    const std::vector<std::uint16_t> whole = run_fa_local(p, config, nullptr);
    const UlyssesSpec spec{c.num_ranks, 0, 0};
    const std::uint32_t num_kv = static_cast<std::uint32_t>(c.seq_len / 128);
    for (int splits : {2, 3, 4}) {
      for (auto kind : {ka::TileSchedulerKind::kStatic, ka::TileSchedulerKind::kDynamic}) {
        SCOPED_TRACE("splits " + std::to_string(splits) + " " + ka::tile_scheduler_name(kind));
        config.tail_kv_splits = splits;
        config.tile_scheduler = kind;
        std::vector<std::uint16_t> first;
        for (int launch = 0; launch < 3; ++launch) {
          const std::vector<std::uint16_t> local = run_fa_local(p, config, nullptr);
          ASSERT_EQ(count_poison(local.data(), local.size()), 0u) << "launch " << launch << " left elements unwritten";
          if (launch == 0) {
            first = local;
            const ErrorStats e = compare_sampled_rows(local.data(), c.heads, c.seq_len, c.head_dim, step, ref.data());
            EXPECT_LE(e.rel_error, 1e-2) << e.describe();
            EXPECT_LE(e.max_abs_error, 0.05) << e.describe();
            // As accurate as the whole-tile kernel (not its bits: P is rounded to bf16 against each piece's own
            // row max, so the two round differently): its error against the fp32 reference at most 1.5x the
            // whole tiles' (2x its max; a piece lost or counted twice moves it by orders of magnitude).
            const ErrorStats w = compare_sampled_rows(whole.data(), c.heads, c.seq_len, c.head_dim, step, ref.data());
            EXPECT_LE(e.rel_error, 1.5 * w.rel_error + 1e-5) << "split " << e.describe() << "; whole " << w.describe();
            EXPECT_LE(e.max_abs_error, 2.0 * w.max_abs_error + 1e-4) << "split " << e.describe() << "; whole "
                                                                      << w.describe();
          } else {
            std::size_t num_differ = 0;
            for (std::size_t i = 0; i < local.size(); ++i) num_differ += local[i] != first[i];
            EXPECT_EQ(num_differ, 0u) << "launch " << launch << " differs from the first split launch";
          }
        }
        for (ka::EpilogueMode mode : {ka::EpilogueMode::kFused, ka::EpilogueMode::kCompletionCoupled}) {
          SCOPED_TRACE(ka::epilogue_mode_name(mode));
          std::vector<ka::TileRecord> records;
          const auto dst = run_fa_ulysses(p, config, mode, spec, nullptr, &records);
          const DestinationCheck chk = check_destinations(c, spec, first, dst);
          EXPECT_EQ(chk.num_wrong, 0u) << chk.first_wrong << " (" << chk.num_unwritten << " unwritten)";
          EXPECT_EQ(chk.num_foreign_written, 0u);
          // Records: every slot written; per (tile, consumer) the KV ranges tile [0, M / b_n) once, one storer.
          const std::size_t num_tiles = static_cast<std::size_t>(c.heads) * (c.seq_len / 128);
          ASSERT_GT(records.size(), 2 * num_tiles) << "no piece ran: the split tail never reached the kernel";
          std::vector<std::vector<int>> covered(2 * num_tiles, std::vector<int>(num_kv, 0));
          std::vector<int> storers(2 * num_tiles, 0), pieces(2 * num_tiles, 0);
          for (std::size_t i = 0; i < records.size(); ++i) {
            const ka::TileRecord& r = records[i];
            ASSERT_EQ(r.written, 1u) << "record " << i;
            ASSERT_LT(r.tile_idx, num_tiles);
            ASSERT_LE(r.kv_begin + r.num_kv_tiles, num_kv);
            const std::size_t key = 2 * r.tile_idx + i % 2;
            for (std::uint32_t j = r.kv_begin; j < r.kv_begin + r.num_kv_tiles; ++j) ++covered[key][j];
            storers[key] += r.partial_only ? 0 : 1;
            ++pieces[key];
            EXPECT_LE(r.qloop_end_cycles, r.store_end_cycles);
          }
          for (std::size_t key = 0; key < covered.size(); ++key) {
            ASSERT_EQ(storers[key], 1) << "tile " << key / 2 << " consumer " << key % 2;
            ASSERT_TRUE(pieces[key] == 1 || pieces[key] == splits) << "tile " << key / 2 << ": " << pieces[key] << " pieces";
            for (std::uint32_t j = 0; j < num_kv; ++j)
              ASSERT_EQ(covered[key][j], 1) << "tile " << key / 2 << " consumer " << key % 2 << " KV tile " << j;
          }
        }
      }
    }
    config.tail_kv_splits = 1;
  }
}

TEST(FlashAttentionValidation, BadShapesRejectedBeforeLaunch) {
  const FaProblem p(1, 256, 128, fresh_seed());
  DeviceBuffer out(p.bytes());
  ka::FlashAttentionConfig config;
  ka::FlashAttentionArgs a;
  a.q = p.q.get();
  a.k = p.k.get();
  a.v = p.v.get();
  a.out = out.get();
  a.out_bytes = out.bytes();
  a.num_heads = 1;
  a.seq_len = 256;
  EXPECT_NO_THROW(ka::validate_flash_attention(config, a));
  auto rejects = [&](ka::FlashAttentionArgs bad, const char* field) {
    try {
      ka::launch_flash_attention(config, bad, nullptr);
      ADD_FAILURE() << "accepted bad " << field;
    } catch (const xs::Error& e) {
      EXPECT_EQ(e.code(), xs::ExitCode::kBadInput) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
    }
  };
  ka::FlashAttentionArgs b = a;
  b.seq_len = 200;
  rejects(b, "seq_len");
  b = a;
  b.head_dim = 96;  // built: 64 and 128
  rejects(b, "head_dim");
  b = a;
  b.out_bytes = out.bytes() - 16;
  rejects(b, "out");
  b = a;
  b.mode = ka::EpilogueMode::kFused;
  b.num_ranks = 3;  // does not divide 256
  rejects(b, "num_ranks");
  b.num_ranks = 2;
  b.dst[0] = out.get();
  b.dst[1] = static_cast<std::uint8_t*>(out.get()) + out.bytes() / 2;
  b.dst_bytes[0] = b.dst_bytes[1] = out.bytes() / 2 - 2;  // one element short
  rejects(b, "dst");
  b.dst_bytes[0] = b.dst_bytes[1] = out.bytes() / 2;
  EXPECT_NO_THROW(ka::validate_flash_attention(config, b));
  b.dst_head_offset = 1;  // heads [1, 2) do not fit a 1-head row
  rejects(b, "dst_head_offset");
  b = a;
  b.records = reinterpret_cast<ka::TileRecord*>(out.get());
  b.records_bytes = 8;
  rejects(b, "records");
  // Every schedule refuses the same bad shapes; an unknown schedule is refused by name.
  for (int sch = 0; sch < ka::kNumMainloopSchedules; ++sch) {
    config.schedule = static_cast<ka::MainloopSchedule>(sch);
    EXPECT_NO_THROW(ka::validate_flash_attention(config, a));
    b = a;
    b.seq_len = 200;
    rejects(b, "seq_len");
  }
  config.schedule = static_cast<ka::MainloopSchedule>(ka::kNumMainloopSchedules);
  rejects(a, "schedule");
  config.schedule = ka::MainloopSchedule::kBaseline;
  config.tile_scheduler = static_cast<ka::TileSchedulerKind>(ka::kNumTileSchedulerKinds);
  rejects(a, "tile_scheduler");
  config.tile_scheduler = ka::TileSchedulerKind::kDynamic;
  config.store_cache = static_cast<ka::StoreCachePolicy>(ka::kNumStoreCachePolicies);
  rejects(a, "store_cache");
  config.store_cache = ka::StoreCachePolicy::kDefault;
  config.kv_cluster_size = 3;
  rejects(a, "kv_cluster_size");
  config.kv_cluster_size = 2;
  EXPECT_NO_THROW(ka::validate_flash_attention(config, a));
  b = a;
  b.seq_len = 128;  // one m-block: no pair of a head
  rejects(b, "seq_len");
  config.num_ctas = 3;
  rejects(a, "num_ctas");
  config.num_ctas = 0;
  config.schedule = ka::MainloopSchedule::kPingPong;
  rejects(a, "kv_cluster_size");
  config.schedule = ka::MainloopSchedule::kBaseline;
  config.kv_cluster_size = 1;
  // Nothing was launched: the device is still healthy.
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace xs::attention
