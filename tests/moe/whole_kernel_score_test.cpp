// xstage moe tests: whole-kernel predictions (src/xs/moe/advisor/whole_kernel_score.hpp) on a committed megamoe file.
// The frozen-input rule: every measured field of the judged (host) launches mutated, no prediction field moves;
// the local control's time mutated, the transfer moves (the test can fail). And the not-calibrated path.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "xs/moe/advisor/whole_kernel_score.hpp"

namespace xs::moe {
namespace {

using nlohmann::json;

json committed_check_file() {
  const std::string path = std::string(XS_TEST_DATA_DIR) + "/../../results/h200/megamoe/matrix/megamoe-check.json";
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return json::parse(s.str());
}

WholeKernelSettings settings_with(model::SlowdownSource term) {
  WholeKernelSettings s;
  s.term = std::move(term);
  s.path.drain_rate_bps = 52.5e9;
  s.path.drain_rate_lo_bps = 51.7e9;
  s.path.drain_rate_hi_bps = 52.8e9;
  s.path.capacity_bytes = s.path.capacity_lo_bytes = s.path.capacity_hi_bytes = std::numeric_limits<double>::infinity();
  s.path.capacity_is_point = true;  // no capacity limit at all (a hand-made path)
  s.reference_fit = false;
  return s;
}

model::SlowdownSource knee() {
  model::SlowdownSource t;
  t.status = model::InterferenceStatus::kIdentified;
  t.label = "hand-made";
  t.slowdown = [](const model::LoadState& l) {
    const double x = 1.0 + 2.0 * std::max(0.0, l.offered_rate_bps / l.drain_rate_bps - 0.5);
    return model::SlowdownBracket{1.0 + 0.8 * (x - 1.0), x, 1.0 + 1.2 * (x - 1.0)};
  };
  return t;
}

// Every prediction field of every option (the measured medians left out).
json predictions_of(const json& doc, const WholeKernelSettings& s) {
  const ScoreInputs in = read_score_inputs({{"megamoe-check.json", doc}}, "host");
  const WholeKernelResult r = predict_whole_kernel(in, s);
  json out = json::array();
  for (const WholeKernelConfig& c : r.configs)
    for (const WholeKernelOption& o : c.options) {
      const auto j = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
      out.push_back({c.label, o.option.key(), j(o.transfer_s), j(o.transfer_lo_s), j(o.transfer_hi_s),
                     j(o.replay_host_s), o.replay_local_s, j(o.transfer_no_term_s), j(o.transfer_constant_s),
                     j(o.abinitio_host_s), j(o.abinitio_local_s), o.transfer_why_not});
    }
  return out;
}

void scale_all_numbers(json& j, double f) {
  if (j.is_structured()) {
    for (auto& v : j) scale_all_numbers(v, f);
  } else if (j.is_number_float()) {
    j = j.get<double>() * f;
  }
}

TEST(WholeKernelScore, NoMeasuredFieldOfTheJudgedLaunchesMovesAPrediction) {
  const json doc = committed_check_file();
  const WholeKernelSettings s = settings_with(knee());
  const json before = predictions_of(doc, s);
  ASSERT_FALSE(before.empty());
  bool any_transfer = false;
  for (const json& row : before) any_transfer = any_transfer || row[2].is_number();
  ASSERT_TRUE(any_transfer) << before.dump();
  json mutated = doc;
  int host_points = 0;
  for (json& p : mutated["points"]) {
    if (p["axes"]["target"] != "host") continue;
    ++host_points;
    scale_all_numbers(p["variants"], 1.7);                      // whole-kernel times and samples
    scale_all_numbers(p["extra"]["variants"], 2.3);             // tile timings, spans, clocks of the judged launches
    scale_all_numbers(p["extra"]["speedup_interleaved_vs_wave"], 0.5);
    scale_all_numbers(p["extra"]["clocks"], 0.7);
  }
  ASSERT_GT(host_points, 0);
  const json after = predictions_of(mutated, s);
  EXPECT_EQ(after, before);
  // The local control is an input: its times mutated, the transfer moves.
  json local = doc;
  for (json& p : local["points"])
    if (p["axes"]["target"] == "local") scale_all_numbers(p["variants"], 1.3);
  EXPECT_NE(predictions_of(local, s), before);
}

TEST(WholeKernelScore, AnUncalibratedTermGivesNoTransferAndSaysSo) {
  model::SlowdownSource none;
  none.why = "no remote_store.loaded block";
  const json rows = predictions_of(committed_check_file(), settings_with(none));
  ASSERT_FALSE(rows.empty());
  for (const json& row : rows) {
    EXPECT_TRUE(row[2].is_null()) << row.dump();
    EXPECT_TRUE(row[9].is_null()) << row.dump();  // ab initio host needs the term too
    EXPECT_TRUE(row[5].is_null()) << row.dump();  // no host replay with a term: null, never a 0 read as a time
    EXPECT_NE(row[11].get<std::string>().find("interference not calibrated"), std::string::npos) << row.dump();
    EXPECT_TRUE(row[7].is_number());  // the Burst-Gap replay without the term is still there, labelled apart
  }
}

// A term used where its calibration did not reach (issue 27 item 4): no transfer and no ab initio host point, the
// reason named, the extrapolated time kept apart, and nothing of it in the bars' statistics.
TEST(WholeKernelScore, ATermUsedOutsideItsCalibrationIsNotDecided) {
  model::SlowdownSource t = knee();
  t.outside = [](const model::LoadState&) { return std::string("K_SM 132 is outside the calibrated 8-66"); };
  const ScoreInputs in = read_score_inputs({{"megamoe-check.json", committed_check_file()}}, "host");
  const WholeKernelResult r = predict_whole_kernel(in, settings_with(t));
  int extrapolated = 0;
  for (const WholeKernelConfig& c : r.configs)
    for (const WholeKernelOption& o : c.options) {
      EXPECT_FALSE(o.transfer_s.has_value());
      EXPECT_FALSE(o.abinitio_host_s.has_value());
      if (o.transfer_extrapolated_s) {
        ++extrapolated;
        EXPECT_NE(o.transfer_why_not.find("outside its calibration"), std::string::npos) << o.transfer_why_not;
        EXPECT_NE(o.transfer_why_not.find("K_SM 132"), std::string::npos);
      }
    }
  ASSERT_GT(extrapolated, 0);
  const json j = whole_kernel_json(r, settings_with(t), json::object());
  int counted = 0;
  for (const json& set : j["sets"])
    for (const auto& [schedule, sj] : set["schedules"].items()) {
      counted += sj["transfer_outcomes"]["not_decided_term_outside_calibration"].get<int>();
      EXPECT_EQ(sj["predictors"]["transfer (calibration term)"]["n"], 0);
    }
  EXPECT_EQ(counted, extrapolated);
}

// Below its calibrated range the term is a bracket: where those loads could add more than 1% of the time, no point
// (adversarial review of 2026-12-07 evening: the linear law's middle was used as a point and passed bars).
TEST(WholeKernelScore, ATermBelowItsRangeThatCouldMatterGivesNoPoint) {
  const ScoreInputs in = read_score_inputs({{"megamoe-check.json", committed_check_file()}}, "host");
  model::SlowdownSource t = knee();
  t.slowdown = [](const model::LoadState&) { return model::SlowdownBracket{1.0, 1.0, 3.0}; };
  t.below = [](const model::LoadState&) { return true; };
  const WholeKernelResult r = predict_whole_kernel(in, settings_with(t));
  int seen = 0;
  for (const WholeKernelConfig& c : r.configs)
    for (const WholeKernelOption& o : c.options) {
      if (!o.transfer_extrapolated_s) continue;
      ++seen;
      EXPECT_FALSE(o.transfer_s.has_value());
      EXPECT_NE(o.transfer_why_not.find("below its calibrated range"), std::string::npos) << o.transfer_why_not;
    }
  EXPECT_GT(seen, 0);
  t.slowdown = [](const model::LoadState&) { return model::SlowdownBracket{1.0, 1.0, 1.0}; };  // cannot add anything
  for (const WholeKernelConfig& c : predict_whole_kernel(in, settings_with(t)).configs)
    for (const WholeKernelOption& o : c.options) EXPECT_FALSE(o.transfer_extrapolated_s.has_value());
}

// Q(K_SM) not identified (issue 27 item 4): the point is replayed at Q's high end and stands only where Q's low end
// gives the same time; where Q decides the time there is no transfer point, the reason names Q, and the interval
// spans Q's bracket.
TEST(WholeKernelScore, AnUnidentifiedCapacityThatDecidesTheTimeGivesNoPoint) {
  const ScoreInputs in = read_score_inputs({{"megamoe-check.json", committed_check_file()}}, "host");
  WholeKernelSettings s = settings_with(knee());
  s.path.capacity_is_point = false;
  s.path.capacity_lo_bytes = 1e12;  // Q at least 1 TB: never reached, the point stands
  s.path.capacity_text = "Q(K) not identified";
  const WholeKernelResult loose = predict_whole_kernel(in, s);
  s.path.capacity_lo_bytes = 4096;  // Q may be 4 KiB: the Combine waits for room
  const WholeKernelResult tight = predict_whole_kernel(in, s);
  int points = 0, open = 0;
  for (std::size_t c = 0; c < loose.configs.size(); ++c)
    for (std::size_t i = 0; i < loose.configs[c].options.size(); ++i) {
      const WholeKernelOption& a = loose.configs[c].options[i];
      const WholeKernelOption& b = tight.configs[c].options[i];
      if (!a.transfer_s) continue;
      ++points;
      ASSERT_TRUE(b.transfer_hi_s && a.transfer_hi_s);
      EXPECT_GE(*b.transfer_hi_s, *a.transfer_hi_s);  // the interval's high end replays Q's low end
      if (b.transfer_s) continue;
      ++open;
      EXPECT_NE(b.transfer_why_not.find("Q(K) not identified"), std::string::npos) << b.transfer_why_not;
      EXPECT_GT(*b.transfer_hi_s, *a.transfer_hi_s);
    }
  ASSERT_GT(points, 0);
  EXPECT_GT(open, 0);
}

}  // namespace
}  // namespace xs::moe

namespace xs::moe {
namespace {

// The transfer's outcome: disagrees when its bracket misses the measured median +-1% at any width; agrees only
// when it meets it and is sharp (no wider than +-5% of its point); a wide bracket that meets it is not decided.
TEST(WholeKernelScore, AWideTransferIntervalThatMeetsTheMeasurementDecidesNothing) {
  WholeKernelResult r;
  WholeKernelConfig c;
  c.label = "host K66 x";
  c.shape = "x";
  c.num_sms = 66;
  const auto option = [](double measured, double point, double lo, double hi) {
    WholeKernelOption o;
    o.option = interleaved_at(1);
    o.host_measured_s = measured;
    o.transfer_s = point;
    o.transfer_lo_s = lo;
    o.transfer_hi_s = hi;
    return o;
  };
  c.options = {option(1.0, 1.0, 0.97, 1.03),   // sharp, meets: agrees
               option(1.0, 1.0, 0.5, 2.0),     // meets, 150% wide: not decided
               option(1.0, 0.8, 0.7, 0.9),     // misses (under): disagrees
               option(1.0, 3.0, 0.2, 0.95)};   // wide and misses: still disagrees
  r.configs.push_back(c);
  WholeKernelSettings s;
  s.reference_fit = false;
  const json out = whole_kernel_json(r, s, json::object());
  const json& t = out.at("sets").at(0).at("schedules").at("interleaved").at("transfer_outcomes");
  EXPECT_EQ(t.at("agrees"), 1) << t.dump();
  EXPECT_EQ(t.at("disagrees"), 2) << t.dump();
  EXPECT_EQ(t.at("not_decided"), 1) << t.dump();
  EXPECT_EQ(t.at("not_decided_too_wide"), 1) << t.dump();
}

}  // namespace
}  // namespace xs::moe
