// xstage moe host layer: variant plans, verification order, pipeline waves, best width (moe_variants.hpp).
#include "xs/moe/run/moe_variants.hpp"

#include <algorithm>

#include "xs/common/error.hpp"
#include "xs/moe/point/moe_point.hpp"

namespace xs::moe {

std::vector<int> expert_wave_widths(const std::vector<int>& requested, int num_local_experts) {
  std::vector<int> out;
  for (int w : requested) {
    if (w < 1) throw input_error("--experts-per-wave", "an expert wave needs at least 1 expert (got " +
                                                           std::to_string(w) + "); e.g. 1,2,4,8");
    out.push_back(std::min(w, std::max(1, num_local_experts)));
  }
  if (out.empty()) out.push_back(1);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void check_variant_families(const std::vector<std::string>& families, const char* flag) {
  const auto& known = moe_variant_names();
  for (const auto& f : families) {
    if (f == "unfused")
      throw input_error(flag, "'unfused' was renamed serial_then_copy (serial schedule, then the copy-engine "
                              "Combine, no overlap); the overlapped pipeline is unfused_overlapped");
    if (std::find(known.begin(), known.end(), f) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw input_error(flag, "'" + f + "' is not a variant; accepted: all, or a list of " + list);
    }
  }
}

std::vector<MoeVariantPlan> plan_variants(const std::vector<std::string>& families, const std::vector<int>& widths,
                                          int lead_rows, const std::string& fault_variant) {
  check_variant_families(families);
  if (widths.empty()) throw input_error("--experts-per-wave", "no expert-wave width to run");
  std::vector<MoeVariantPlan> plans;
  for (const auto& f : families.empty() ? moe_variant_names() : families) {
    MoeVariantPlan p;
    p.family = f;
    p.name = f;
    if (f == "expert_wave") {
      for (int w : widths) {
        MoeVariantPlan q = p;
        q.schedule = "expert_wave";
        q.experts_per_wave = w;
        if (widths.size() > 1) q.name = "expert_wave_w" + std::to_string(w);
        plans.push_back(q);
      }
      continue;
    }
    if (f == "expert_wave_cc") {
      p.schedule = "expert_wave";
      p.experts_per_wave = widths.front();
    } else if (f == "interleaved" || f == "interleaved_cc") {
      p.schedule = "interleaved";
      p.lead_rows = lead_rows;
    } else {
      p.schedule = "serial";
    }
    p.completion_coupled = f == "expert_wave_cc" || f == "interleaved_cc";
    if (f == "serial_then_copy" || f == "unfused_overlapped") p.pipeline = f;
    if (f == "phase_l1") p.phases = "linear1";
    if (f == "phase_l2") p.phases = "linear2";
    plans.push_back(p);
  }
  for (auto& p : plans) p.fault_skip_l2_wait = !fault_variant.empty() && p.name == fault_variant;
  return plans;
}

std::vector<std::size_t> verification_order(std::size_t n, std::size_t rotation) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back((i + rotation) % n);
  return out;
}

std::vector<PipelineWave> pipeline_waves(const std::vector<std::uint32_t>& expert_first_block, int num_waves) {
  if (num_waves < 1) throw input_error("--overlap-waves", "the overlapped pipeline needs at least 1 wave");
  if (expert_first_block.size() < 2 || expert_first_block.front() != 0)
    throw input_error("expert_first_block", "needs E + 1 entries starting at 0");
  const int experts = static_cast<int>(expert_first_block.size()) - 1;
  const std::uint32_t blocks = expert_first_block.back();
  const std::uint32_t per_wave = (blocks + static_cast<std::uint32_t>(num_waves) - 1) / static_cast<std::uint32_t>(num_waves);
  std::vector<PipelineWave> waves;
  PipelineWave w;
  for (int e = 0; e < experts; ++e) {
    w.end_expert = e + 1;
    w.end_block = expert_first_block[e + 1];
    if (w.end_block - w.first_block >= std::max<std::uint32_t>(per_wave, 1) || e + 1 == experts) {
      if (w.end_block > w.first_block || waves.empty()) waves.push_back(w);
      else waves.back().end_expert = w.end_expert;  // trailing empty experts join the last wave
      w.first_expert = e + 1;
      w.first_block = w.end_block;
    }
  }
  return waves;
}

int best_wave_plan(const std::vector<MoeVariantPlan>& plans, const std::vector<double>& median_s) {
  int best = -1;
  for (std::size_t i = 0; i < plans.size() && i < median_s.size(); ++i)
    if (plans[i].family == "expert_wave" && median_s[i] > 0 && (best < 0 || median_s[i] < median_s[best]))
      best = static_cast<int>(i);
  return best;
}

}  // namespace xs::moe
