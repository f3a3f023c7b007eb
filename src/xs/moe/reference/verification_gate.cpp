// xstage moe host layer: the pass rule of a verified MegaMoE launch and its CPU mirror (verification_gate.hpp).
#include "xs/moe/reference/verification_gate.hpp"

#include <cmath>

#include "xs/common/error.hpp"
#include "xs/kernels/moe/compare_rule.cuh"
#include "xs/kernels/moe/fp8.hpp"

namespace xs::moe {

namespace km = xs::kernels::moe;

CombineTolerance combine_tolerance(const std::string& precision, double reference_rms) {
  if (!(reference_rms > 0) || !std::isfinite(reference_rms))
    throw input_error("reference_rms", "the reference's RMS must be finite and > 0 (an all-zero reference "
                                       "verifies nothing)");
  if (precision == "bf16") return {2e-2 * reference_rms, 1.6e-2, 1e-5};
  if (precision == "fp8") return {0.25 * reference_rms, 6e-2, 1e-4};
  throw input_error("precision", "'" + precision + "' has no verification tolerance; accepted: bf16, fp8");
}

CombineVerdict judge_combine(const CombineCounts& c, const CombineTolerance& tol, bool check_unexpected) {
  CombineVerdict v;
  const auto fail = [&v](const std::string& why) { v.reason += (v.reason.empty() ? "" : "; ") + why; };
  if (c.compared_elements == 0) fail("no element compared");
  if (c.wrong_elements > 0) fail(std::to_string(c.wrong_elements) + " elements outside the elementwise tolerance");
  if (c.unwritten_slots > 0) fail(std::to_string(c.unwritten_slots) + " expected slots not written");
  if (check_unexpected && c.unexpected_slots > 0)
    fail(std::to_string(c.unexpected_slots) + " slots written that no pool row targets");
  if (c.multi_writer_slots > 0) fail(std::to_string(c.multi_writer_slots) + " slots with several writers");
  if (!(c.relative_difference <= tol.max_relative_difference))
    fail("relative difference " + std::to_string(c.relative_difference) + " above " +
         std::to_string(tol.max_relative_difference));
  v.passed = v.reason.empty();
  return v;
}

CombineCounts compare_combine_host(const std::vector<std::uint16_t>& test, const std::vector<std::uint16_t>& ref,
                                   const std::vector<std::uint32_t>& writers, int hidden, const CombineTolerance& tol,
                                   std::uint16_t poison_bits) {
  const std::size_t h = static_cast<std::size_t>(hidden);
  if (hidden <= 0 || test.size() != ref.size() || test.size() != writers.size() * h)
    throw input_error("test", "test and ref need [slots][hidden] elements and one writer count per slot");
  CombineCounts c;
  double sum_tr = 0, sum_tt = 0, sum_rr = 0;
  for (std::size_t s = 0; s < writers.size(); ++s) {
    bool poisoned = false, written = false;
    for (std::size_t col = 0; col < h; ++col) {
      const std::uint16_t tb = test[s * h + col], rb = ref[s * h + col];
      if (tb == poison_bits) {
        poisoned = true;
        continue;
      }
      written = true;
      if (writers[s] == 0) continue;
      ++c.compared_elements;
      float abs_err, rel_err;
      c.wrong_elements += km::element_excess(tb, rb, static_cast<float>(tol.abs_tol), static_cast<float>(tol.rel_tol),
                                             abs_err, rel_err) > 1.0f;
      const double tv = km::bf16_bits_value(tb), rv = km::bf16_bits_value(rb);
      if (std::isfinite(tv) && std::isfinite(rv)) {
        sum_tr += tv * rv;
        sum_tt += tv * tv;
        sum_rr += rv * rv;
      }
    }
    c.unwritten_slots += writers[s] > 0 && poisoned;
    c.unexpected_slots += writers[s] == 0 && written;
    c.multi_writer_slots += writers[s] > 1;
  }
  c.relative_difference = km::relative_difference_from_sums(sum_tr, sum_tt, sum_rr);
  return c;
}

double reference_rms_host(const std::vector<std::uint16_t>& ref, const std::vector<std::uint32_t>& writers,
                          int hidden) {
  const std::size_t h = static_cast<std::size_t>(hidden);
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t s = 0; s < writers.size(); ++s)
    if (writers[s] > 0)
      for (std::size_t col = 0; col < h; ++col) {
        const double v = km::bf16_bits_value(ref[s * h + col]);
        if (std::isfinite(v)) sum += v * v, ++n;
      }
  return n > 0 ? std::sqrt(sum / static_cast<double>(n)) : 0.0;
}

}  // namespace xs::moe
