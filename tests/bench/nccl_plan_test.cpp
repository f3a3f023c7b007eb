// Tests for backends/nccl/nccl_plan.hpp (plain C++, the nccl:N target's host-side decisions): version codes, the
// device-API refusals and the one-local-rank note, argument checks, the LSA-to-world pointer table, the
// all-to-all bandwidth arithmetic and its verification pattern.
#include "xs/backends/nccl/nccl_plan.hpp"

#include <gtest/gtest.h>

#include "xs/backends/nccl/nccl_alltoall.hpp"

#include "xs/common/error.hpp"

namespace xs::runtime {
namespace {

template <typename Fn>
void expect_input_error(Fn fn, const std::string& field, const std::string& part) {
  try {
    fn();
    FAIL() << "no error; expected " << field << ": " << part;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(NcclPlan, VersionCodesFollowBothNcclEncodings) {
  EXPECT_EQ(nccl_version_code(2, 28, 3), 22803);
  EXPECT_EQ(nccl_version_code(2, 8, 4), 2804);  // before 2.9: X*1000 + Y*100 + Z
  EXPECT_EQ(nccl_version_text(22803), "2.28.3");
  EXPECT_EQ(nccl_version_text(22809), "2.28.9");
  EXPECT_EQ(nccl_version_text(2804), "2.8.4");
  EXPECT_EQ(nccl_version_text(21903), "2.19.3");
}

TEST(NcclPlan, DeviceApiNeeds228OnBothSidesAndTheSameMinor) {
  EXPECT_FALSE(nccl_device_api_refusal(22809, 22803).has_value());  // older patch at run time: padded for
  EXPECT_FALSE(nccl_device_api_refusal(22803, 22809).has_value());
  const auto old_headers = nccl_device_api_refusal(22703, 22803);
  ASSERT_TRUE(old_headers.has_value());
  EXPECT_EQ(old_headers->rfind("unavailable: built against NCCL 2.27.3", 0), 0u) << *old_headers;
  const auto old_library = nccl_device_api_refusal(22809, 22707);
  ASSERT_TRUE(old_library.has_value());
  EXPECT_EQ(old_library->rfind("unavailable: running NCCL 2.27.7", 0), 0u) << *old_library;
  const auto newer_minor = nccl_device_api_refusal(22809, 22901);
  ASSERT_TRUE(newer_minor.has_value());
  EXPECT_TRUE(contains(*newer_minor, "2.28.9")) << *newer_minor;
  EXPECT_TRUE(contains(*newer_minor, "2.29.1")) << *newer_minor;
  EXPECT_TRUE(contains(*newer_minor, "rebuild")) << *newer_minor;
}

TEST(NcclPlan, OneLocalRankNoteOnlyFor2280To2286) {
  EXPECT_TRUE(contains(nccl_one_local_rank_note(22803, 1), "2.28.7")) << nccl_one_local_rank_note(22803, 1);
  EXPECT_TRUE(contains(nccl_one_local_rank_note(22800, 1), "NCCL 2.28.0"));
  EXPECT_EQ(nccl_one_local_rank_note(22806, 1).empty(), false);
  EXPECT_EQ(nccl_one_local_rank_note(22807, 1), "");
  EXPECT_EQ(nccl_one_local_rank_note(22809, 1), "");
  EXPECT_EQ(nccl_one_local_rank_note(22803, 2), "");
  EXPECT_EQ(nccl_one_local_rank_note(22703, 1), "");
}

TEST(NcclPlan, TargetDevicesAreTheMeasuringGpuThenTheOwner) {
  EXPECT_EQ(nccl_target_devices(0, 0), std::vector<int>({0}));
  EXPECT_EQ(nccl_target_devices(2, 5), std::vector<int>({2, 5}));
  EXPECT_EQ(nccl_target_devices(5, 2), std::vector<int>({5, 2}));
}

TEST(NcclPlan, DeviceListsAreCheckedNamingTheProblem) {
  validate_nccl_devices({0}, 1);
  validate_nccl_devices({3, 0, 7}, 8);
  expect_input_error([] { validate_nccl_devices({}, 8); }, "devices", "no GPU given");
  expect_input_error([] { validate_nccl_devices({0, 1, 0}, 8); }, "devices", "GPU 0 is given twice");
  expect_input_error([] { validate_nccl_devices({1}, 1); }, "devices", "GPU 1 does not exist here (1 GPUs: 0..0)");
  expect_input_error([] { validate_nccl_devices({-1}, 4); }, "devices", "GPU -1 does not exist");
}

TEST(NcclPlan, RanksOfAMultiProcessCommunicatorAreChecked) {
  validate_nccl_rank(1, 0);
  validate_nccl_rank(8, 7);
  expect_input_error([] { validate_nccl_rank(0, 0); }, "rank", "world size 0");
  expect_input_error([] { validate_nccl_rank(8, 8); }, "rank", "rank 8 outside 0..7");
  expect_input_error([] { validate_nccl_rank(8, -1); }, "rank", "rank -1 outside 0..7");
}

TEST(NcclPlan, AlltoallRecordIsSiNumbersAndNamesAFailedVerification) {
  NcclAlltoallReference ref;
  ref.method = "ncclAlltoAll";
  ref.nccl_version = 22803;
  ref.num_ranks = 2;
  ref.bytes_per_peer = 4096;
  ref.time_s = {2e-6, 3e-6};
  ref.median_time_s = 2.5e-6;
  ref.algbw_bps = 2 * 4096 / 2.5e-6;
  ref.busbw_bps = ref.algbw_bps / 2;
  ref.verified = true;
  nlohmann::json j = to_json(ref);
  EXPECT_EQ(j.at("method"), "ncclAlltoAll");
  EXPECT_TRUE(j.at("median_time_s").is_number_float());
  EXPECT_DOUBLE_EQ(j.at("busbw_bps").get<double>(), ref.busbw_bps);
  EXPECT_EQ(j.at("time_s").size(), 2u);
  EXPECT_EQ(j.at("bytes_per_peer"), 4096);
  EXPECT_FALSE(j.contains("verification_error"));
  ref.verified = false;
  ref.verification_error = "rank 1: byte 3 of the block from rank 0 is 0x00, expected 0x5a";
  j = to_json(ref);
  EXPECT_EQ(j.at("verified"), false);
  EXPECT_EQ(j.at("verification_error"), ref.verification_error);
}

TEST(NcclPlan, WindowSizeIsWholePages) {
  EXPECT_EQ(nccl_window_bytes(1), 4096u);
  EXPECT_EQ(nccl_window_bytes(4096), 4096u);
  EXPECT_EQ(nccl_window_bytes(4097), 8192u);
  EXPECT_EQ(nccl_window_bytes(3 << 20), std::size_t{3} << 20);
  expect_input_error([] { (void)nccl_window_bytes(0); }, "bytes", "0 bytes");
}

TEST(NcclPlan, WorldPointerTablePlacesTeamMembersAndLeavesOthersNull) {
  int cells[4];
  const std::vector<void*> lsa_ptrs = {&cells[0], &cells[1], &cells[2], &cells[3]};
  // 8 ranks on two nodes of 4; world rank 5 is team index 1 of the second node's team.
  const std::vector<void*> dst = world_pointer_table(8, 5, {4, 1, 1}, lsa_ptrs);
  ASSERT_EQ(dst.size(), 8u);
  for (int w = 0; w < 4; ++w) EXPECT_EQ(dst[w], nullptr) << w;
  for (int w = 4; w < 8; ++w) EXPECT_EQ(dst[w], lsa_ptrs[w - 4]) << w;

  const std::vector<void*> one = world_pointer_table(1, 0, {1, 0, 1}, {&cells[0]});
  EXPECT_EQ(one, std::vector<void*>({&cells[0]}));

  // Stride 2: team members are world ranks 1, 3 (this rank 3 is team index 1).
  const std::vector<void*> strided = world_pointer_table(4, 3, {2, 1, 2}, {&cells[0], &cells[1]});
  EXPECT_EQ(strided, std::vector<void*>({nullptr, &cells[0], nullptr, &cells[1]}));

  expect_input_error([&] { (void)world_pointer_table(8, 5, {4, 1, 1}, {&cells[0]}); }, "lsa", "not a team");
  expect_input_error([&] { (void)world_pointer_table(8, 5, {0, 0, 1}, {}); }, "lsa", "not a team");
  expect_input_error([&] { (void)world_pointer_table(4, 3, {4, 1, 1}, lsa_ptrs); }, "lsa", "world rank 4 outside 0..3");
}

TEST(NcclPlan, AlltoallBandwidthIsNcclTestsArithmetic) {
  const AlltoallBandwidth four = alltoall_bandwidth(1 << 20, 4, 1e-3);
  EXPECT_DOUBLE_EQ(four.algbw_bps, 4.0 * (1 << 20) / 1e-3);
  EXPECT_DOUBLE_EQ(four.busbw_bps, four.algbw_bps * 3.0 / 4.0);
  const AlltoallBandwidth one = alltoall_bandwidth(4096, 1, 2e-6);
  EXPECT_DOUBLE_EQ(one.algbw_bps, 4096 / 2e-6);
  EXPECT_EQ(one.busbw_bps, 0.0);
  expect_input_error([] { (void)alltoall_bandwidth(1, 0, 1.0); }, "ranks", "at least one rank");
  expect_input_error([] { (void)alltoall_bandwidth(1, 2, 0.0); }, "time", "positive");
}

TEST(NcclPlan, AlltoallPatternIsDeterministicAndTellsBlocksApart) {
  int differ_swapped = 0, differ_seed = 0, distinct_values = 0;
  std::vector<bool> seen(256, false);
  for (std::size_t b = 0; b < 256; ++b) {
    EXPECT_EQ(alltoall_pattern_byte(7, 0, 1, b), alltoall_pattern_byte(7, 0, 1, b));
    differ_swapped += alltoall_pattern_byte(7, 0, 1, b) != alltoall_pattern_byte(7, 1, 0, b);
    differ_seed += alltoall_pattern_byte(7, 2, 3, b) != alltoall_pattern_byte(8, 2, 3, b);
    const std::uint8_t v = alltoall_pattern_byte(7, 2, 3, b);
    if (!seen[v]) ++distinct_values;
    seen[v] = true;
  }
  // A hash: nearly every byte differs (a match has probability 1/256), and the values are spread.
  EXPECT_GT(differ_swapped, 240);
  EXPECT_GT(differ_seed, 240);
  EXPECT_GT(distinct_values, 100);
}

TEST(NcclPlan, AlltoallArgumentsAreChecked) {
  validate_alltoall_args(1, 0, 1);
  expect_input_error([] { validate_alltoall_args(0, 1, 5); }, "bytes_per_peer", "positive byte count");
  expect_input_error([] { validate_alltoall_args(64, 1, 0); }, "iterations", "0 timed iterations");
  expect_input_error([] { validate_alltoall_args(64, -1, 3); }, "warmup", "-1 warm-up");
}

}  // namespace
}  // namespace xs::runtime
