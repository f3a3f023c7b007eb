// xstage bench layer: agreement on a step's failure across ranks (see rank_agree.hpp).
#include "xs/bench/rank_agree.hpp"

#include <fmt/format.h>

namespace xs::bench {

RankStatus run_capturing(const std::function<void()>& step) {
  RankStatus s;
  try {
    step();
  } catch (const Error& e) {
    s = {false, static_cast<int>(e.code()), e.domain(), e.field(), e.what()};
  } catch (const std::exception& e) {
    s = {false, static_cast<int>(ExitCode::kDeviceFailure), "runtime", "", e.what()};
  }
  return s;
}

nlohmann::json to_json(const RankStatus& s) {
  return {{"ok", s.ok}, {"code", s.code}, {"domain", s.domain}, {"field", s.field}, {"message", s.message}};
}

RankStatus rank_status_from_json(const nlohmann::json& j) {
  return {j.at("ok").get<bool>(), j.at("code").get<int>(), j.at("domain").get<std::string>(),
          j.at("field").get<std::string>(), j.at("message").get<std::string>()};
}

int first_failed_rank(const std::vector<RankStatus>& by_rank) {
  for (std::size_t r = 0; r < by_rank.size(); ++r)
    if (!by_rank[r].ok) return static_cast<int>(r);
  return -1;
}

bool all_failed_alike(const std::vector<RankStatus>& by_rank) {
  for (const auto& s : by_rank)
    if (s.ok || s.code != by_rank.front().code || s.message != by_rank.front().message) return false;
  return !by_rank.empty();
}

void throw_agreed(const RankStatus& s, int failed_rank, bool name_rank) {
  const std::string message = name_rank ? fmt::format("rank {}: {}", failed_rank, s.message) : s.message;
  throw RankAgreedError(static_cast<ExitCode>(s.code), s.domain, s.field, message, failed_rank);
}

void agree(RankComm& comm, const std::function<void()>& step) {
  if (comm.size() == 1) {
    step();
    return;
  }
  const RankStatus mine = run_capturing(step);
  const std::vector<std::string> gathered = comm.gather_bytes_to_root(to_json(mine).dump());
  std::string verdict;  // rank 0: {"rank": -1} or the failing rank and its status
  if (comm.rank() == 0) {
    std::vector<RankStatus> by_rank;
    for (const auto& text : gathered) by_rank.push_back(rank_status_from_json(nlohmann::json::parse(text)));
    const int failed = first_failed_rank(by_rank);
    nlohmann::json v = {{"rank", failed}, {"name_rank", !all_failed_alike(by_rank)}};
    if (failed >= 0) v["status"] = to_json(by_rank[static_cast<std::size_t>(failed)]);
    verdict = v.dump();
  }
  const nlohmann::json v = nlohmann::json::parse(broadcast_string(comm, verdict));
  const int failed = v.at("rank").get<int>();
  if (failed >= 0) throw_agreed(rank_status_from_json(v.at("status")), failed, v.at("name_rank").get<bool>());
}

nlohmann::json gather_combine_broadcast(RankComm& comm, const std::function<nlohmann::json()>& produce,
                                        const std::function<nlohmann::json(std::vector<nlohmann::json>)>& combine) {
  if (comm.size() == 1) return combine({produce()});
  nlohmann::json mine;
  const RankStatus status = run_capturing([&] { mine = produce(); });
  const std::vector<std::string> gathered =
      comm.gather_bytes_to_root(nlohmann::json{{"status", to_json(status)}, {"value", mine}}.dump());
  std::string reply;  // rank 0: {"rank": failing rank or -1, "status" or "value"}
  if (comm.rank() == 0) {
    std::vector<RankStatus> by_rank;
    std::vector<nlohmann::json> values;
    for (const auto& text : gathered) {
      nlohmann::json j = nlohmann::json::parse(text);
      by_rank.push_back(rank_status_from_json(j.at("status")));
      values.push_back(std::move(j.at("value")));
    }
    int failed = first_failed_rank(by_rank);
    RankStatus failure = failed >= 0 ? by_rank[static_cast<std::size_t>(failed)] : RankStatus{};
    nlohmann::json combined;
    if (failed < 0) {
      failure = run_capturing([&] { combined = combine(std::move(values)); });
      if (!failure.ok) failed = 0;
    }
    const bool name_rank = !all_failed_alike(by_rank);
    reply = failed >= 0 ? nlohmann::json{{"rank", failed}, {"status", to_json(failure)}, {"name_rank", name_rank}}.dump()
                        : nlohmann::json{{"rank", -1}, {"value", combined}}.dump();
  }
  const nlohmann::json r = nlohmann::json::parse(broadcast_string(comm, reply));
  const int failed = r.at("rank").get<int>();
  if (failed >= 0) throw_agreed(rank_status_from_json(r.at("status")), failed, r.at("name_rank").get<bool>());
  return r.at("value");
}

}  // namespace xs::bench
