// xstage bench layer: the application point harness (plain C++) the GPU runners share (attention/run/fa_runner,
// moe/run/moe_runner): skip, verified launches on fresh poison with an exchange's barriers, the untimed
// instrumented launches, then the rotating round-robin timing. A runner supplies its variants as callbacks
// (poison, launch, check, replay); the harness owns their order. Callbacks' exceptions propagate.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace xs::bench {

// One replay of `variant`: its sample (e.g. seconds per launch). `kept` is false in warm-up rounds.
using RoundReplay = std::function<double(std::size_t variant, bool kept)>;

// input_error for no variant, warmup < 0 or repetitions < 1 (what time_round_robin refuses).
void check_round_robin(std::size_t num_variants, int warmup, int repetitions);

// [variant][round] samples of the `repetitions` kept rounds. Round k (warm-up rounds first) visits every
// variant once, in order from variant k mod n, so clock drift and other tenants reach every variant alike and
// same-round differences pair samples taken close together. `barrier`, when given, runs before every replay.
std::vector<std::vector<double>> time_round_robin(std::size_t num_variants, int warmup, int repetitions,
                                                  const RoundReplay& replay, const std::function<void()>& barrier = {});

// One variant's verified launch.
struct VerifiedVariant {
  std::string name;
  std::function<void()> poison;  // poisons what the launch writes (across ranks: and waits for it)
  std::function<void()> launch;  // launches and waits
  std::function<bool()> check;   // reads back and judges: true when it passed
  bool always = false;     // also launched and checked with verification off (its verdict then ignored)
  bool exchanged = false;  // writes other ranks' windows: the exchange's barriers apply
};

// Across ranks (a process or thread per GPU): every rank meets at the same points. Around an exchanged
// variant: [meet], poison, meet, launch, meet, check, meet. Before every timed replay: meet.
struct PointExchange {
  std::function<void()> barrier;     // empty: one rank, no barriers
  bool meet_before_poison = false;   // also meet before poisoning
};

struct PointTiming {
  std::size_t num_variants = 0;
  int warmup = 0;
  int repetitions = 1;
  std::function<RoundReplay()> prepare;  // called once before the first round (e.g. captures CUDA graphs)
};

struct PointPlan {
  bool verify = true;
  std::vector<VerifiedVariant> verified;
  std::vector<std::size_t> verify_order;  // indices into `verified`; empty: as listed
  PointExchange exchange;
  std::function<void()> instrument;       // the untimed instrumented launches; empty: none
  PointTiming timing;
};

struct PointOutcome {
  std::string skip_reason;                  // not empty: skipped, nothing else ran
  bool verified = false;                    // verification on and every check passed
  bool verification_failed = false;         // verification on and a check failed
  std::vector<std::string> failed_variants; // in verification order
  std::vector<std::vector<double>> rounds;  // [timed variant][round]
};

// unavailable(): why the point cannot run here (then nothing else is called), else nothing. prepare() builds the
// plan (device state, inputs). Then: verified launches in verify_order (a failed check is recorded, the rest
// still run, as do the timed rounds), plan.instrument, and the timed rounds.
PointOutcome run_point_harness(const std::function<std::optional<std::string>()>& unavailable,
                               const std::function<PointPlan()>& prepare);

}  // namespace xs::bench
