// xstage gate layer: the two-sided Mann-Whitney U (Wilcoxon rank-sum) test, used to tell a real change of
// a measured point from run-to-run noise with the per-repetition samples both result files store.
#pragma once
#include <cstddef>
#include <vector>

namespace xs::gate {

struct UTestResult {
  double u = 0;        // U of the first sample: pairs (a_i, b_j) with a_i > b_j, ties counting 1/2
  double p_value = 1;  // two-sided
  bool exact = false;  // exact null distribution (no ties, small n) rather than the normal approximation
};

// Exact p (enumerated null distribution of U) when there are no ties and both samples hold at most
// kExactMaxSamples values; otherwise the normal approximation with tie correction and a 0.5 continuity
// correction, as scipy.stats.mannwhitneyu (which Google Benchmark's compare.py calls) does.
// Throws std::invalid_argument when a sample is empty or holds a non-finite value.
inline constexpr std::size_t kExactMaxSamples = 50;
UTestResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// The smallest two-sided p any outcome can give with n1 and n2 samples (complete separation, exact:
// 2 / C(n1 + n2, n1)): 0.10 at 3 + 3, 0.029 at 4 + 4, 0.0079 at 5 + 5. If it is not below alpha the test
// cannot detect anything and must not be reported as evidence either way.
double smallest_p_value(std::size_t n1, std::size_t n2);

}  // namespace xs::gate
