// tests/mpi: checks of the result files a multi-rank run writes (tests/mpi/mpi_sim_ranks_test.sh), a plain
// program on the files: no MPI here.
//   seeds MERGED                 prints meta.ranks[*].seed, one per line (each rank's simulator seed)
//   max MERGED SINGLE_0 ...      MERGED's points are, per repetition, the max over the single-rank runs
//                                SINGLE_r (run with rank r's seed): issue_time_s, issue_time_max_s, period_s
//                                samples; meta.launch.num_ranks is the number of SINGLE files
//   same A B                     A and B hold the same points with the same samples (a resumed run and an
//                                uninterrupted one)
// Exit 0 when every check holds, 1 with the first failure on stderr, 2 on bad usage.
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {
using nlohmann::json;

json read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return json::parse(in);
}

// Points by identity: id + spec.
std::map<std::string, json> points_of(const json& file) {
  std::map<std::string, json> out;
  for (const auto& p : file.at("points")) out[p.at("id").get<std::string>() + " " + p.at("spec").dump()] = p;
  return out;
}

std::vector<double> samples(const json& point, const char* stat) {
  if (!point.contains(stat) || !point.at(stat).is_object() || !point.at(stat).contains("samples")) return {};
  return point.at(stat).at("samples").get<std::vector<double>>();
}

int fail(const std::string& what) {
  std::fprintf(stderr, "rank_result_check: FAILED %s\n", what.c_str());
  return 1;
}

int check_max(const std::vector<std::string>& args) {
  const json merged = read(args[0]);
  std::vector<std::map<std::string, json>> singles;
  for (std::size_t i = 1; i < args.size(); ++i) singles.push_back(points_of(read(args[i])));
  const json& launch = merged.at("meta").at("launch");
  if (launch.at("num_ranks").get<std::size_t>() != singles.size())
    return fail("meta.launch.num_ranks " + launch.at("num_ranks").dump() + ", expected " + std::to_string(singles.size()));
  std::size_t num_samples = 0, num_above_rank0 = 0;
  for (const auto& [key, point] : points_of(merged)) {
    for (const char* stat : {"issue_time_s", "issue_time_max_s", "period_s"}) {
      const std::vector<double> m = samples(point, stat);
      std::vector<std::vector<double>> by_rank;
      for (const auto& single : singles) {
        const auto it = single.find(key);
        if (it == single.end()) return fail("point " + key + " missing from a single-rank run");
        by_rank.push_back(samples(it->second, stat));
        if (by_rank.back().size() != m.size()) return fail(key + " " + stat + ": sample counts differ");
      }
      for (std::size_t t = 0; t < m.size(); ++t) {
        double max_s = by_rank[0][t];
        for (const auto& r : by_rank) max_s = std::max(max_s, r[t]);
        if (m[t] != max_s)
          return fail(key + " " + stat + " repetition " + std::to_string(t) + ": merged " + std::to_string(m[t]) +
                      ", max over ranks " + std::to_string(max_s));
        ++num_samples;
        num_above_rank0 += m[t] > by_rank[0][t] ? 1 : 0;
      }
    }
  }
  // With noise the other ranks are slower than rank 0 in some repetitions: the merge is not rank 0's data.
  if (num_samples == 0 || num_above_rank0 == 0)
    return fail("no sample where another rank was slower than rank 0 (" + std::to_string(num_samples) + " samples)");
  std::printf("merge ok: %zu samples are the per-repetition max over %zu ranks (%zu above rank 0's)\n", num_samples,
              singles.size(), num_above_rank0);
  return 0;
}

int check_same(const std::string& a_path, const std::string& b_path) {
  const auto a = points_of(read(a_path)), b = points_of(read(b_path));
  if (a.size() != b.size()) return fail(std::to_string(a.size()) + " points against " + std::to_string(b.size()));
  for (const auto& [key, point] : a) {
    const auto it = b.find(key);
    if (it == b.end()) return fail("point " + key + " only in " + a_path);
    for (const char* stat : {"issue_time_s", "issue_time_max_s", "period_s"})
      if (samples(point, stat) != samples(it->second, stat)) return fail(key + " " + stat + " samples differ");
  }
  std::printf("same ok: %zu points with the same samples\n", a.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 2 && args[0] == "seeds") {
      const json file = read(args[1]);
      for (const auto& r : file.at("meta").at("ranks")) std::printf("%s\n", r.at("seed").dump().c_str());
      return 0;
    }
    if (args.size() >= 3 && args[0] == "max") return check_max({args.begin() + 1, args.end()});
    if (args.size() == 3 && args[0] == "same") return check_same(args[1], args[2]);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  std::fprintf(stderr, "usage: rank_result_check seeds FILE | max MERGED SINGLE... | same A B\n");
  return 2;
}
