// xstage bench layer: turning one rank's failure into the same clean failure on every rank. Each rank runs a
// step and reports ok or its error; rank 0 picks the lowest failing rank and every rank throws that error,
// so no rank is left waiting in a collective for a rank that gave up. Plain C++ over bench/rank_comm.hpp.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/bench/rank_comm.hpp"
#include "xs/common/error.hpp"

namespace xs::bench {

// The error every rank throws after an agreement found a failure: the failing rank's code, domain and field,
// its message prefixed "rank <r>: " (in a run of several ranks, unless every rank failed with that message). Rank 0 reports it; the others can stay
// silent because rank 0 says the same.
class RankAgreedError : public Error {
 public:
  RankAgreedError(ExitCode code, std::string domain, std::string field, const std::string& message, int failed_rank)
      : Error(code, std::move(domain), std::move(field), message), failed_rank_(failed_rank) {}
  int failed_rank() const { return failed_rank_; }

 private:
  int failed_rank_;
};

// One rank's outcome of a step, small enough to gather.
struct RankStatus {
  bool ok = true;
  int code = 0;  // ExitCode of the error (130 for an abandoned point)
  std::string domain, field, message;
};

// Runs `step`, catching xs::Error (its code) and any std::exception (exit 3) into the status.
RankStatus run_capturing(const std::function<void()>& step);
nlohmann::json to_json(const RankStatus& status);
RankStatus rank_status_from_json(const nlohmann::json& j);
// The lowest rank that failed, or -1.
int first_failed_rank(const std::vector<RankStatus>& by_rank);
// True when every rank failed with the same code and message (a refusal of the common input).
bool all_failed_alike(const std::vector<RankStatus>& by_rank);
// Throws RankAgreedError for the failure of rank `failed_rank`, its message prefixed "rank r: " when
// `name_rank` (several ranks, not all failing alike).
[[noreturn]] void throw_agreed(const RankStatus& status, int failed_rank, bool name_rank);

// Runs `step` on every rank, then agrees: with one rank, step runs as it is (its exception propagates
// unchanged, exactly as without ranks); with several, a failure on any rank throws RankAgreedError on all.
void agree(RankComm& comm, const std::function<void()>& step);

// Every rank produces a JSON value; rank 0 combines them (in rank order) and every rank returns rank 0's
// combined value. A throw in `produce` on any rank or in `combine` on rank 0 becomes RankAgreedError on every
// rank (the lowest failing rank's; combine counts as rank 0's). One rank: combine({produce()}), exceptions
// unchanged.
nlohmann::json gather_combine_broadcast(RankComm& comm, const std::function<nlohmann::json()>& produce,
                                        const std::function<nlohmann::json(std::vector<nlohmann::json>)>& combine);

}  // namespace xs::bench
