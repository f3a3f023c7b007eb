// xstage moe judge layer: scores schedule advice against measured MegaMoE launches, the advisor beside the
// constant policies (issue 27 item 3). Plain data in, plain scores out: no file reading, no model. A policy's
// answer per configuration is a choice (or "either", or "not decided") and, where it predicts one, the
// expert-wave / interleaved speedup with an interval at each measured pair. Definitions in docs/predict-moe.md.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace xs::moe {

// One runnable schedule: interleaved at row lead D, or expert-wave with w local experts per wave.
struct ScheduleOption {
  std::string schedule;      // "interleaved" | "expert_wave"
  int lead_rows = 0;         // D (interleaved only)
  int experts_per_wave = 0;  // w (expert_wave only)
  std::string key() const;   // "interleaved D=3", "expert_wave w=1"
  bool operator==(const ScheduleOption& o) const {
    return schedule == o.schedule && lead_rows == o.lead_rows && experts_per_wave == o.experts_per_wave;
  }
};
ScheduleOption interleaved_at(int lead_rows);
ScheduleOption expert_wave_with(int experts_per_wave);

// What the judged (host) launches measured for one option: the median per launch over every point that ran
// it (several points: the median of their medians; between-run offsets are not removed), and the spread.
struct MeasuredOption {
  ScheduleOption option;
  double median_s = 0;
  double p10_s = 0, p90_s = 0;  // of the pooled per-launch samples
  std::vector<std::string> sources;  // "file.json#i"
};

// One paired measurement: expert-wave (w) over interleaved (D) timed round-robin in the same point.
struct MeasuredPair {
  int lead_rows = 0, experts_per_wave = 1;
  double speedup_median = 0, speedup_p10 = 0, speedup_p90 = 0;  // > 1: interleaved faster
  std::vector<std::string> sources;
};

struct JudgedConfig {
  std::string label;                   // "host K66 dit_moe bf16 skewed T6976 b_n128"
  std::vector<MeasuredOption> options;
  std::vector<MeasuredPair> pairs;
  const MeasuredOption* find(const ScheduleOption& o) const;
  const MeasuredOption* best() const;  // smallest median; nullptr without options
};

// A predicted speedup (expert-wave w / interleaved D) at one pair. decided = false: a flagged input leaves a
// side unbounded; `why` names it.
struct SpeedupPrediction {
  double value = 0, low = 0, high = 0;
  bool decided = true;
  std::string why;
};

enum class Decision { kChoice, kEither, kNotDecided };

// A policy's answer for one configuration (same index as the JudgedConfig).
struct PolicyAnswer {
  Decision decision = Decision::kChoice;
  ScheduleOption choice;                    // kChoice
  std::vector<ScheduleOption> either;       // kEither: the options said to tie (the slower one is charged)
  std::string why;                          // kNotDecided / kEither: the reason
  // Predicted speedup at each of the configuration's measured pairs (same order), or none (constant policies).
  std::vector<std::optional<SpeedupPrediction>> speedups;
  ScheduleOption fallback;                  // kNotDecided: what a user would run anyway (charged in regret)
  int own_lead_rows = 0;  // the D this policy itself would run interleaved at (0: none); its own-D Spearman uses it
};

enum class Outcome { kAgrees, kDisagrees, kNotDecided, kNotMeasured };
const char* outcome_name(Outcome o);

struct ConfigScore {
  std::string label;
  Outcome choice = Outcome::kNotMeasured;
  std::optional<double> regret;          // measured time of the option charged / best measured (>= 1)
  std::string charged;                   // key of the option charged
  std::string best;                      // key of the best measured option
};

struct PairScore {
  std::string label;
  int lead_rows = 0, experts_per_wave = 1;
  double measured = 0, measured_p10 = 0, measured_p90 = 0;
  std::optional<SpeedupPrediction> predicted;
  Outcome outcome = Outcome::kNotDecided;  // interval [low, high] overlaps [p10, p90]: agrees
};

struct PolicyScore {
  std::string policy;
  int num_configs = 0;
  int agrees = 0, disagrees = 0, not_decided = 0, not_measured = 0;  // choice outcomes
  int num_regret = 0;                                                // configs with a regret
  std::optional<double> regret_mean, regret_worst;
  std::string regret_worst_config;
  // Speedup prediction (absent for a policy that predicts none).
  int num_pairs = 0, pair_agrees = 0, pair_disagrees = 0, pair_not_decided = 0;
  std::optional<double> spearman;                  // predicted value vs measured median, pooled over every D
  std::optional<double> spearman_own_d;            // the same on the pairs at the policy's own D only
  int num_pairs_own_d = 0;
  int num_pairs_no_point = 0;  // decided pairs whose prediction has no point value (a flagged input): no rank, no error
  // Regret on the configurations where every scored policy was charged a measured option (set by
  // common_regret: means over different configuration sets are not comparable).
  int num_common = 0;
  std::optional<double> regret_mean_common, regret_worst_common;
  std::optional<double> error_median, error_p90;   // |predicted / measured - 1|
  std::optional<double> coverage;                  // measured median inside [low, high]
  std::vector<std::string> distinct_choices;       // keys (schedule only, D and w dropped) the policy chose
  std::vector<std::string> distinct_options;       // the full keys (with D or w) the policy chose
  std::vector<ConfigScore> configs;
  std::vector<PairScore> pairs;
};

// Choice outcome: agrees when the option charged is the best measured or its per-launch samples overlap the
// best's ([p10, p90] intervals meet: the launches cannot tell them apart); disagrees otherwise; not decided
// for "either" and "not decided" answers (they are still charged in regret); not measured when the option
// charged was not run.
PolicyScore score_policy(const std::string& name, const std::vector<JudgedConfig>& configs,
                         const std::vector<PolicyAnswer>& answers);

// Fills num_common, regret_mean_common and regret_worst_common of every policy over the configurations where
// all of them have a regret (the policies must have been scored on the same configurations, in order).
void common_regret(std::vector<PolicyScore>& policies);

// Spearman's rank correlation with average ranks for ties; nullopt for fewer than 3 pairs or a constant side.
std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y);

// The constant policies of issue 27 (answers without speedup predictions).
std::vector<PolicyAnswer> always_interleaved(const std::vector<JudgedConfig>& configs, const std::vector<int>& lead_rows);
std::vector<PolicyAnswer> always_interleaved_best_measured_d(const std::vector<JudgedConfig>& configs);
std::vector<PolicyAnswer> always_expert_wave(const std::vector<JudgedConfig>& configs);

// Plain-words verdicts of the advisor against the constants: where it does not beat one (mean or worst
// regret, or agreements), and a recommendation that never varies. Regrets are compared on the common
// configurations (common_regret) where they are set, else on each policy's own.
std::vector<std::string> comparison_statements(const PolicyScore& advisor, const std::vector<PolicyScore>& constants);

}  // namespace xs::moe
