// xstage moe host layer: what a megamoe point runs, as plain data. The variant families a spec names expand
// to launch plans (the expert-wave widths swept as variants), the verification order rotates, the
// unfused_overlapped pipeline's waves are cut, and the fastest expert-wave width is picked as the baseline.
// Plain C++: the CUDA runner launches these plans; the CPU tests enumerate them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xs::moe {

struct MoeVariantPlan {
  std::string name;             // stable id in the result: expert_wave_w4, interleaved, serial_then_copy, ...
  std::string family;           // the moe_variant_names() entry it came from
  std::string schedule;         // expert_wave | interleaved | serial
  int experts_per_wave = 0;     // expert_wave schedule only
  int lead_rows = 0;            // interleaved schedule only (D)
  bool completion_coupled = false;
  std::string pipeline = "fused";  // fused | serial_then_copy | unfused_overlapped
  std::string phases = "all";      // all | linear1 | linear2
  bool fault_skip_l2_wait = false; // tests only (MoePointSpec::fault_skip_l2_wait_variant)
};

// The widths to sweep: each clipped to [1, num_local_experts], duplicates dropped, ascending; {1} when empty.
// input_error for a width < 1.
std::vector<int> expert_wave_widths(const std::vector<int>& requested, int num_local_experts);

// Throws input_error naming the family when it is not one of moe_variant_names() (the old "unfused" is
// named as renamed to serial_then_copy).
void check_variant_families(const std::vector<std::string>& families, const char* flag = "--variants");

// families (empty: every family) in their order; expert_wave expands to one plan per width (named
// expert_wave_w<n> when there are several widths, else expert_wave); expert_wave_cc runs the smallest width.
std::vector<MoeVariantPlan> plan_variants(const std::vector<std::string>& families, const std::vector<int>& widths,
                                          int lead_rows, const std::string& fault_variant = "");

// Positions 0..n-1 starting at rotation % n.
std::vector<std::size_t> verification_order(std::size_t n, std::size_t rotation);

// unfused_overlapped: consecutive experts grouped into at most num_waves waves, a wave closed once it holds
// ceil(num_row_blocks / num_waves) row blocks; empty experts ride along; every row block in exactly one wave.
// expert_first_block: E + 1 entries from 0 to num_row_blocks.
struct PipelineWave {
  int first_expert = 0, end_expert = 0;
  std::uint32_t first_block = 0, end_block = 0;
};
std::vector<PipelineWave> pipeline_waves(const std::vector<std::uint32_t>& expert_first_block, int num_waves);

// Index of the expert-wave plan (family expert_wave) with the smallest median_s (> 0), or -1 if none.
int best_wave_plan(const std::vector<MoeVariantPlan>& plans, const std::vector<double>& median_s);

}  // namespace xs::moe
