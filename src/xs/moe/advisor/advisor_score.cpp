// xstage moe judge layer: scoring schedule advice against measured launches (see advisor_score.hpp).
#include "xs/moe/advisor/advisor_score.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <set>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"

namespace xs::moe {
namespace {

// Mean or worst regrets closer than this are a tie: the resolution of the measured times they are ratios of.
// Two calls' medians of the same host option differ by a median 1.0% (p90 5.5%; 44 option medians of
// results/h200/megamoe/b7f0e7b-canlose call-1 vs call-2), so a 0.04% lead is not a lead. (It was 1e-9 until
// 2026-12-06: the out-of-sample "beats eq. 16's D" rested on 1.0111 vs 1.0115.)
constexpr double kSameRegret = 0.01;

std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double r = 0.5 * double(i + j) + 1.0;  // ties share the mean of their 1-based ranks
    for (std::size_t k = i; k <= j; ++k) rank[idx[k]] = r;
    i = j + 1;
  }
  return rank;
}

// The option a policy's answer is charged with (the slower of an "either"), or nullptr when not measured.
const MeasuredOption* charged_option(const JudgedConfig& c, const PolicyAnswer& a) {
  switch (a.decision) {
    case Decision::kChoice: return c.find(a.choice);
    case Decision::kNotDecided: return c.find(a.fallback);
    case Decision::kEither: {
      const MeasuredOption* worst = nullptr;
      for (const ScheduleOption& o : a.either) {
        const MeasuredOption* m = c.find(o);
        if (m == nullptr) return nullptr;  // a tie claimed with an option never run cannot be charged
        if (worst == nullptr || m->median_s > worst->median_s) worst = m;
      }
      return worst;
    }
  }
  return nullptr;
}

}  // namespace

std::string ScheduleOption::key() const {
  return schedule == "interleaved" ? fmt::format("interleaved D={}", lead_rows)
                                   : fmt::format("{} w={}", schedule, experts_per_wave);
}
ScheduleOption interleaved_at(int lead_rows) { return {"interleaved", lead_rows, 0}; }
ScheduleOption expert_wave_with(int experts_per_wave) { return {"expert_wave", 0, experts_per_wave}; }

const MeasuredOption* JudgedConfig::find(const ScheduleOption& o) const {
  for (const MeasuredOption& m : options)
    if (m.option == o) return &m;
  return nullptr;
}

const MeasuredOption* JudgedConfig::best() const {
  const MeasuredOption* b = nullptr;
  for (const MeasuredOption& m : options)
    if (b == nullptr || m.median_s < b->median_s) b = &m;
  return b;
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kAgrees: return "agrees";
    case Outcome::kDisagrees: return "disagrees";
    case Outcome::kNotDecided: return "not decided";
    case Outcome::kNotMeasured: return "not measured";
  }
  return "?";
}

std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw input_error("spearman", "the two series differ in length");
  if (x.size() < 3) return std::nullopt;
  const std::vector<double> rx = average_ranks(x), ry = average_ranks(y);
  const double n = double(x.size()), mean = (n + 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx <= 0 || syy <= 0) return std::nullopt;  // a constant side has no ranking
  return sxy / std::sqrt(sxx * syy);
}

PolicyScore score_policy(const std::string& name, const std::vector<JudgedConfig>& configs,
                         const std::vector<PolicyAnswer>& answers) {
  if (answers.size() != configs.size())
    throw input_error("policy " + name, fmt::format("{} answers for {} configurations", answers.size(), configs.size()));
  PolicyScore s;
  s.policy = name;
  s.num_configs = static_cast<int>(configs.size());
  std::set<std::string> choices, options;
  std::vector<double> regrets, pred, meas, errors, pred_own, meas_own;
  int covered = 0, num_interval = 0;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const JudgedConfig& c = configs[i];
    const PolicyAnswer& a = answers[i];
    ConfigScore cs;
    cs.label = c.label;
    switch (a.decision) {
      case Decision::kChoice: choices.insert(a.choice.schedule), options.insert(a.choice.key()); break;
      case Decision::kEither: choices.insert("either"), options.insert("either"); break;
      case Decision::kNotDecided: choices.insert("not decided"), options.insert("not decided"); break;
    }
    const MeasuredOption* best = c.best();
    const MeasuredOption* charged = best ? charged_option(c, a) : nullptr;
    if (best) cs.best = best->option.key();
    if (charged == nullptr) {
      cs.choice = Outcome::kNotMeasured;
      cs.charged = a.decision == Decision::kChoice ? a.choice.key() : "";
    } else {
      cs.charged = charged->option.key();
      cs.regret = charged->median_s / best->median_s;
      regrets.push_back(*cs.regret);
      if (!s.regret_worst || *cs.regret > *s.regret_worst) {
        s.regret_worst = *cs.regret;
        s.regret_worst_config = c.label;
      }
      if (a.decision != Decision::kChoice)
        cs.choice = Outcome::kNotDecided;
      else
        cs.choice = (charged == best || charged->p10_s <= best->p90_s) ? Outcome::kAgrees : Outcome::kDisagrees;
    }
    switch (cs.choice) {
      case Outcome::kAgrees: ++s.agrees; break;
      case Outcome::kDisagrees: ++s.disagrees; break;
      case Outcome::kNotDecided: ++s.not_decided; break;
      case Outcome::kNotMeasured: ++s.not_measured; break;
    }
    s.configs.push_back(cs);

    if (!a.speedups.empty() && a.speedups.size() != c.pairs.size())
      throw input_error("policy " + name, fmt::format("{}: {} speedup predictions for {} measured pairs", c.label,
                                                       a.speedups.size(), c.pairs.size()));
    for (std::size_t k = 0; k < a.speedups.size(); ++k) {
      const MeasuredPair& m = c.pairs[k];
      PairScore ps{c.label, m.lead_rows, m.experts_per_wave, m.speedup_median, m.speedup_p10, m.speedup_p90,
                   a.speedups[k], Outcome::kNotDecided};
      ++s.num_pairs;
      if (ps.predicted && ps.predicted->decided) {
        const SpeedupPrediction& p = *ps.predicted;
        ps.outcome = (p.low <= m.speedup_p90 && p.high >= m.speedup_p10) ? Outcome::kAgrees : Outcome::kDisagrees;
        ++num_interval;
        if (m.speedup_median >= p.low && m.speedup_median <= p.high) ++covered;
        // A prediction resting on a flagged input has no point value (NaN): it is judged by its interval
        // alone and enters neither the rank correlation nor the error of the point.
        if (std::isfinite(p.value)) {
          pred.push_back(p.value);
          meas.push_back(m.speedup_median);
          errors.push_back(std::fabs(p.value / m.speedup_median - 1.0));
          if (a.own_lead_rows > 0 && m.lead_rows == a.own_lead_rows) {
            pred_own.push_back(p.value);
            meas_own.push_back(m.speedup_median);
          }
        } else {
          ++s.num_pairs_no_point;
        }
      }
      if (ps.outcome == Outcome::kAgrees) ++s.pair_agrees;
      else if (ps.outcome == Outcome::kDisagrees) ++s.pair_disagrees;
      else ++s.pair_not_decided;
      s.pairs.push_back(ps);
    }
  }
  s.num_regret = static_cast<int>(regrets.size());
  if (!regrets.empty()) s.regret_mean = std::accumulate(regrets.begin(), regrets.end(), 0.0) / double(regrets.size());
  if (!errors.empty()) {
    s.spearman = spearman(pred, meas);
    s.spearman_own_d = spearman(pred_own, meas_own);
    s.num_pairs_own_d = static_cast<int>(pred_own.size());
    s.error_median = quantile(errors, 0.5);
    s.error_p90 = quantile(errors, 0.9);
  }
  if (num_interval > 0) s.coverage = double(covered) / double(num_interval);
  s.distinct_choices.assign(choices.begin(), choices.end());
  s.distinct_options.assign(options.begin(), options.end());
  return s;
}

void common_regret(std::vector<PolicyScore>& policies) {
  if (policies.empty()) return;
  const std::size_t n = policies.front().configs.size();
  for (const PolicyScore& p : policies)
    if (p.configs.size() != n) throw input_error("common_regret", "the policies were scored on different configurations");
  std::vector<std::size_t> common;
  for (std::size_t k = 0; k < n; ++k) {
    bool all = true;
    for (const PolicyScore& p : policies) all &= p.configs[k].regret.has_value() && p.configs[k].label == policies[0].configs[k].label;
    if (all) common.push_back(k);
  }
  for (PolicyScore& p : policies) {
    p.num_common = static_cast<int>(common.size());
    p.regret_mean_common.reset();
    p.regret_worst_common.reset();
    if (common.empty()) continue;
    double sum = 0, worst = 0;
    for (std::size_t k : common) {
      sum += *p.configs[k].regret;
      worst = std::max(worst, *p.configs[k].regret);
    }
    p.regret_mean_common = sum / double(common.size());
    p.regret_worst_common = worst;
  }
}

std::vector<PolicyAnswer> always_interleaved(const std::vector<JudgedConfig>& configs,
                                             const std::vector<int>& lead_rows) {
  if (lead_rows.size() != configs.size())
    throw input_error("lead_rows", "one D per configuration is needed for the always-interleaved policy");
  std::vector<PolicyAnswer> out(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) out[i].choice = interleaved_at(lead_rows[i]);
  return out;
}

std::vector<PolicyAnswer> always_interleaved_best_measured_d(const std::vector<JudgedConfig>& configs) {
  std::vector<PolicyAnswer> out(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const MeasuredOption* best = nullptr;
    for (const MeasuredOption& m : configs[i].options)
      if (m.option.schedule == "interleaved" && (best == nullptr || m.median_s < best->median_s)) best = &m;
    // No interleaved launch measured: the policy names D = 0, which no measurement has (not measured).
    out[i].choice = best ? best->option : interleaved_at(0);
  }
  return out;
}

std::vector<PolicyAnswer> always_expert_wave(const std::vector<JudgedConfig>& configs) {
  std::vector<PolicyAnswer> out(configs.size());
  for (auto& a : out) a.choice = expert_wave_with(1);
  return out;
}

namespace {

struct MeanCi {
  double mean = 0, lo = 0, hi = 0;
};
// The advisor's regret minus the constant's on each configuration where both were charged a measured option
// (the same label), averaged; a percentile bootstrap over those configurations (fixed seed) says how much the
// mean moves with which configurations happened to be measured. nullopt for fewer than 3 configurations. A
// context for the verdict, not a rule: the 1% tie stays the rule (between calls the verdict has flipped).
std::optional<MeanCi> paired_mean_difference_ci(const PolicyScore& a, const PolicyScore& b) {
  std::vector<double> d;
  for (std::size_t k = 0; k < a.configs.size() && k < b.configs.size(); ++k)
    if (a.configs[k].regret && b.configs[k].regret && a.configs[k].label == b.configs[k].label)
      d.push_back(*a.configs[k].regret - *b.configs[k].regret);
  if (d.size() < 3) return std::nullopt;
  const auto mean_of = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum / double(v.size());
  };
  std::mt19937_64 rng(0xad'5c0eULL);
  std::uniform_int_distribution<std::size_t> pick(0, d.size() - 1);
  std::vector<double> means(2000), draw(d.size());
  for (double& m : means) {
    for (double& x : draw) x = d[pick(rng)];
    m = mean_of(draw);
  }
  std::sort(means.begin(), means.end());
  return MeanCi{mean_of(d), means[static_cast<std::size_t>(0.025 * (means.size() - 1))],
                means[static_cast<std::size_t>(0.975 * (means.size() - 1))]};
}

}  // namespace

std::vector<std::string> comparison_statements(const PolicyScore& advisor, const std::vector<PolicyScore>& constants) {
  std::vector<std::string> out;
  if (advisor.distinct_options.size() == 1)
    out.push_back(fmt::format("The advisor's recommendation never varies (always '{}' over {} configurations): it is "
                              "not a prediction.",
                              advisor.distinct_options.front(), advisor.num_configs));
  else if (advisor.distinct_choices.size() == 1)
    out.push_back(fmt::format("The advisor's schedule never varies (always '{}' over {} configurations); only its D "
                              "or w does ({} distinct answers): on the schedule it is not a prediction.",
                              advisor.distinct_choices.front(), advisor.num_configs, advisor.distinct_options.size()));
  else if (std::find(advisor.distinct_choices.begin(), advisor.distinct_choices.end(), "expert_wave") ==
           advisor.distinct_choices.end()) {
    std::string answers;
    for (const std::string& c : advisor.distinct_choices) answers += (answers.empty() ? "'" : ", '") + c + "'";
    out.push_back(fmt::format("The advisor never recommends expert-wave; its answers are {}: on the schedule it "
                              "never predicts a loss for interleaving.",
                              answers));
  }
  bool beats_all = true;
  for (const PolicyScore& c : constants) {
    const bool common = advisor.regret_mean_common && c.regret_mean_common;
    const auto& am = common ? advisor.regret_mean_common : advisor.regret_mean;
    const auto& aw = common ? advisor.regret_worst_common : advisor.regret_worst;
    const auto& cm = common ? c.regret_mean_common : c.regret_mean;
    const auto& cw = common ? c.regret_worst_common : c.regret_worst;
    if (!am || !cm || !aw || !cw) continue;
    const double dm = *am - *cm, dw = *aw - *cw;
    const std::string on = common ? fmt::format(" on the {} configurations where both were measured", advisor.num_common)
                                  : std::string(" (each on its own configurations)");
    std::string mean = fmt::format("mean regret {:.4f} vs {:.4f}{}", *am, *cm, on);
    if (const auto ci = paired_mean_difference_ci(advisor, c))
      mean += fmt::format(" (paired difference {:+.4f}, 95% bootstrap interval over configurations [{:+.4f}, {:+.4f}])",
                          ci->mean, ci->lo, ci->hi);
    const std::string worst = fmt::format("worst regret {:.4f} vs {:.4f}", *aw, *cw);
    if (dm > kSameRegret || dw > kSameRegret) {
      beats_all = false;
      out.push_back(fmt::format("The advisor does worse than the constant policy '{}' ({}; {}).", c.policy, mean, worst));
    } else if (dm > -kSameRegret && dw > -kSameRegret) {
      beats_all = false;
      out.push_back(fmt::format("The advisor does not beat the constant policy '{}': it ties it within the 1% "
                                "resolution of the measured times ({}; {}).", c.policy, mean, worst));
    } else if (dm > -kSameRegret || dw > -kSameRegret) {
      beats_all = false;
      out.push_back(fmt::format("The advisor does not beat the constant policy '{}' on both counts by more than "
                                "the 1% resolution of the measured times ({}; {}).", c.policy, mean, worst));
    } else {
      out.push_back(fmt::format("The advisor beats the constant policy '{}' ({}; {}).", c.policy, mean, worst));
    }
    if (advisor.agrees < c.agrees)
      out.push_back(fmt::format("Its choice agrees with the measurement in fewer configurations than '{}' ({} vs {}).",
                                c.policy, advisor.agrees, c.agrees));
  }
  if (beats_all && !constants.empty())
    out.push_back("The advisor beats every constant policy on both mean and worst regret.");
  return out;
}

}  // namespace xs::moe
