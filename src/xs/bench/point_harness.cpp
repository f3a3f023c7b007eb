// xstage bench layer: the application point harness (see point_harness.hpp).
#include "xs/bench/point_harness.hpp"

#include "xs/common/error.hpp"

namespace xs::bench {
namespace {

// Runs one verified launch with the exchange's barriers; returns its verdict.
bool run_verified(const VerifiedVariant& v, const PointExchange& ex) {
  const bool meet = v.exchanged && static_cast<bool>(ex.barrier);
  if (meet && ex.meet_before_poison) ex.barrier();  // no rank's previous launch still stores into a window
  if (v.poison) v.poison();
  if (meet) ex.barrier();  // every window poisoned before any rank stores into it
  v.launch();
  if (meet) ex.barrier();  // every rank's stores landed
  const bool passed = v.check();
  if (meet) ex.barrier();  // nobody poisons for the next variant while a rank still reads
  return passed;
}

}  // namespace

void check_round_robin(std::size_t num_variants, int warmup, int repetitions) {
  if (num_variants == 0) throw input_error("variants", "nothing to time");
  if (warmup < 0) throw input_error("warmup", "expected >= 0");
  if (repetitions < 1) throw input_error("repetitions", "expected >= 1");
}

std::vector<std::vector<double>> time_round_robin(std::size_t num_variants, int warmup, int repetitions,
                                                  const RoundReplay& replay, const std::function<void()>& barrier) {
  check_round_robin(num_variants, warmup, repetitions);
  std::vector<std::vector<double>> samples(num_variants);
  for (int round = 0; round < warmup + repetitions; ++round)
    for (std::size_t i = 0; i < num_variants; ++i) {
      const std::size_t v = (i + static_cast<std::size_t>(round)) % num_variants;
      if (barrier) barrier();
      const bool kept = round >= warmup;
      const double sample = replay(v, kept);
      if (kept) samples[v].push_back(sample);
    }
  return samples;
}

PointOutcome run_point_harness(const std::function<std::optional<std::string>()>& unavailable,
                               const std::function<PointPlan()>& prepare) {
  PointOutcome out;
  if (unavailable) {
    if (auto why = unavailable()) {
      out.skip_reason = why->empty() ? "unavailable" : *why;
      return out;
    }
  }
  const PointPlan plan = prepare();
  std::vector<std::size_t> order = plan.verify_order;
  if (order.empty())
    for (std::size_t i = 0; i < plan.verified.size(); ++i) order.push_back(i);
  bool all_passed = true;
  for (std::size_t i : order) {
    const VerifiedVariant& v = plan.verified.at(i);
    if (!plan.verify && !v.always) continue;
    const bool passed = run_verified(v, plan.exchange);
    if (plan.verify && !passed) {
      all_passed = false;
      out.failed_variants.push_back(v.name);
    }
  }
  out.verified = plan.verify && all_passed;
  out.verification_failed = plan.verify && !all_passed;
  if (plan.instrument) plan.instrument();
  const PointTiming& t = plan.timing;
  check_round_robin(t.num_variants, t.warmup, t.repetitions);
  out.rounds = time_round_robin(t.num_variants, t.warmup, t.repetitions, t.prepare(), plan.exchange.barrier);
  return out;
}

}  // namespace xs::bench
