// xstage GPU moe tests: the on-device Combine check catches each planted fault (perturbed element,
// expected slot left poisoned, unexpected slot written, two rows on one slot) and counts nothing on a
// clean copy; the sampled mask compares only the sampled rows' slots.
#include <gtest/gtest.h>

#include <string>

#include "moe_test_problem.hpp"

namespace xs::moe::test {
namespace {

namespace km = xs::kernels::moe;

class CombineCheckFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = fresh_seed();
    std::mt19937_64 rng(seed_);
    rt_ = build_routing(sh_, rng);
    routing_.emplace(rt_.view());
    in_.emplace(sh_, rt_.num_arrivals, seed_);
    ref_.emplace(sh_.num_ranks, sh_.tokens_per_rank, sh_.top_k, sh_.hidden);
    test_.emplace(sh_.num_ranks, sh_.tokens_per_rank, sh_.top_k, sh_.hidden);
    ref_->poison(nullptr);
    km::MoeReferenceArgs a = reference_args(sh_, rt_, *routing_, *in_);
    ref_->fill_args(a);
    run_moe_reference(a, nullptr);
    mask_ = build_slot_mask(*routing_, sh_.num_ranks, sh_.slots_per_rank(), 0, -1, nullptr);
    for (int r = 0; r < rt_.num_pool_rows(); ++r)
      if (rt_.pool_arrival[r] >= 0) valid_rows_.push_back(r);
    ASSERT_GE(valid_rows_.size(), 2u);
    for (int k = 0; k < sh_.num_ranks * int(sh_.slots_per_rank()) && free_slot_ < 0; ++k) {
      bool used = false;
      for (int r : valid_rows_)
        used |= rt_.pool_dst_rank[r] * int(sh_.slots_per_rank()) + rt_.pool_dst_slot[r] == k;
      if (!used) free_slot_ = k;
    }
    ASSERT_GE(free_slot_, 0) << "routing left no slot unused";
  }
  void restore_copy() {
    for (int r = 0; r < sh_.num_ranks; ++r)
      XS_CUDA_CHECK(cudaMemcpy(test_->ranks[r].get(), ref_->ranks[r].get(), ref_->bytes_per_rank(),
                               cudaMemcpyDeviceToDevice));
  }
  std::uint16_t read(int rank, std::uint32_t slot, int col) const {
    std::uint16_t b = 0;
    runtime::copy_to_host(&b, test_->ranks[rank].as<std::uint16_t>() + std::size_t(slot) * sh_.hidden + col, 2);
    return b;
  }
  void write(int rank, std::uint32_t slot, int col, std::uint16_t bits) {
    runtime::copy_to_device(test_->ranks[rank].as<std::uint16_t>() + std::size_t(slot) * sh_.hidden + col, &bits, 2);
  }
  CombineCheck check(const DeviceBuffer& mask, float abs_tol = 1e-3f, float rel_tol = 1e-2f) {
    CombineCheckSpec spec;
    spec.test = &*test_;
    spec.ref = &*ref_;
    spec.slot_mask = &mask;
    spec.abs_tol = abs_tol;
    spec.rel_tol = rel_tol;
    return compare_combine(spec, nullptr);
  }
  std::uint64_t total() const { return std::uint64_t(sh_.num_ranks) * sh_.slots_per_rank() * sh_.hidden; }
  std::uint64_t expected_elements() const { return valid_rows_.size() * std::uint64_t(sh_.hidden); }

  TestShape sh_;
  std::uint64_t seed_ = 0;
  HostRouting rt_;
  std::optional<DeviceRouting> routing_;
  std::optional<DeviceInputs> in_;
  std::optional<CombineDestinations> ref_, test_;
  DeviceBuffer mask_;
  std::vector<int> valid_rows_;
  int free_slot_ = -1;  // rank * slots_per_rank + slot that no pool row targets
};

TEST_F(CombineCheckFaults, CleanCopyCountsNothing) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  restore_copy();
  const CombineCheck c = check(mask_);
  EXPECT_TRUE(c.clean()) << c.summary();
  EXPECT_EQ(c.counts.total_elements, total());
  EXPECT_EQ(c.counts.bitwise_equal_elements, total());
  EXPECT_EQ(c.counts.compared_elements, expected_elements());
  EXPECT_EQ(c.counts.unwritten_elements, 0u);
  EXPECT_EQ(c.counts.unexpected_elements, 0u);
  EXPECT_EQ(c.counts.max_abs_error, 0.0f);
}

TEST_F(CombineCheckFaults, EachPlantedFaultIsCaughtAlone) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const int r0 = valid_rows_.front(), r1 = valid_rows_.back();
  const int rank0 = rt_.pool_dst_rank[r0], rank1 = rt_.pool_dst_rank[r1];
  const auto slot0 = std::uint32_t(rt_.pool_dst_slot[r0]), slot1 = std::uint32_t(rt_.pool_dst_slot[r1]);
  const int col = sh_.hidden / 3;

  // (a) one element far off: wrong 1, located exactly.
  restore_copy();
  const float v = bf16_to_float(read(rank0, slot0, col));
  write(rank0, slot0, col, float_to_bf16(v + 1.0f));
  CombineCheck c = check(mask_);
  EXPECT_EQ(c.counts.wrong_elements, 1u) << c.summary();
  EXPECT_EQ(c.counts.unwritten_slots + c.counts.unexpected_slots, 0u) << c.summary();
  EXPECT_EQ(c.counts.bitwise_equal_elements, total() - 1);
  EXPECT_EQ(c.worst_rank, rank0);
  EXPECT_EQ(c.worst_slot, int(slot0));
  EXPECT_EQ(c.worst_col, col);
  EXPECT_NEAR(c.counts.max_abs_error, std::fabs(bf16_to_float(float_to_bf16(v + 1.0f)) - v), 1e-6);
  EXPECT_GT(c.counts.worst_excess, 1.0f);

  // (b) one bf16 ulp off: within tolerance, not bitwise equal.
  restore_copy();
  write(rank0, slot0, col, static_cast<std::uint16_t>(read(rank0, slot0, col) ^ 1u));
  c = check(mask_);
  EXPECT_TRUE(c.clean()) << c.summary();
  EXPECT_EQ(c.counts.bitwise_equal_elements, total() - 1);
  EXPECT_GT(c.counts.max_abs_error, 0.0f);
  EXPECT_EQ(c.worst_col, col);

  // (c) an expected slot with one element still poisoned: unwritten slot 1, element 1, not "wrong".
  restore_copy();
  write(rank1, slot1, col, km::kPoisonBits);
  c = check(mask_);
  EXPECT_EQ(c.counts.unwritten_slots, 1u) << c.summary();
  EXPECT_EQ(c.counts.unwritten_elements, 1u);
  EXPECT_EQ(c.counts.wrong_elements + c.counts.unexpected_slots, 0u) << c.summary();
  EXPECT_EQ(c.counts.compared_elements, expected_elements() - 1);

  // (d) a slot no row targets written: unexpected slot 1 with the elements written.
  restore_copy();
  const int free_rank = free_slot_ / int(sh_.slots_per_rank());
  const auto free_slot = std::uint32_t(free_slot_ % int(sh_.slots_per_rank()));
  write(free_rank, free_slot, 0, float_to_bf16(0.5f));
  write(free_rank, free_slot, sh_.hidden - 1, float_to_bf16(-0.25f));
  c = check(mask_);
  EXPECT_EQ(c.counts.unexpected_slots, 1u) << c.summary();
  EXPECT_EQ(c.counts.unexpected_elements, 2u);
  EXPECT_EQ(c.counts.wrong_elements + c.counts.unwritten_slots, 0u) << c.summary();

  // (e) two pool rows routed to one slot: multi-writer 1 (and the slot left behind is now unexpected).
  restore_copy();
  HostRouting twice = rt_;
  twice.pool_dst_rank[r1] = rank0;
  twice.pool_dst_slot[r1] = int(slot0);
  const DeviceRouting twice_dev(twice.view());
  const DeviceBuffer twice_mask = build_slot_mask(twice_dev, sh_.num_ranks, sh_.slots_per_rank(), 0, -1, nullptr);
  c = check(twice_mask);
  EXPECT_EQ(c.counts.multi_writer_slots, 1u) << c.summary();
  EXPECT_EQ(c.counts.unexpected_slots, 1u) << c.summary();
  EXPECT_FALSE(c.clean());
}

// Reference run on a row range, checked against a full run: only the range's slots are compared, the
// others only for being written.
TEST_F(CombineCheckFaults, SampledMaskComparesOnlySampledRows) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  restore_copy();  // test = full run
  ref_->poison(nullptr);
  const int row_begin = 64, row_end = std::min(rt_.num_pool_rows(), 192);
  km::MoeReferenceArgs a = reference_args(sh_, rt_, *routing_, *in_);
  ref_->fill_args(a);
  a.row_begin = row_begin;
  a.row_end = row_end;
  run_moe_reference(a, nullptr);
  const DeviceBuffer mask =
      build_slot_mask(*routing_, sh_.num_ranks, sh_.slots_per_rank(), row_begin, row_end, nullptr);
  std::uint64_t sampled = 0;
  for (int r : valid_rows_) sampled += r >= row_begin && r < row_end;
  ASSERT_GT(sampled, 0u);
  const CombineCheck c = check(mask);
  EXPECT_TRUE(c.clean()) << c.summary();
  EXPECT_EQ(c.counts.compared_elements, sampled * sh_.hidden);
  EXPECT_EQ(c.counts.bitwise_equal_elements, total() - (valid_rows_.size() - sampled) * sh_.hidden);
  // The full mask sees the reference's unsampled slots as poisoned where the test wrote them: compared
  // elements drop nothing (test values are written), but each differs from the poisoned reference.
  const CombineCheck full_mask = check(mask_);
  EXPECT_EQ(full_mask.counts.wrong_elements, (valid_rows_.size() - sampled) * sh_.hidden) << full_mask.summary();
}

}  // namespace
}  // namespace xs::moe::test
