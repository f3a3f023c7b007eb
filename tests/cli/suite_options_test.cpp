// Tests for cli/common/suite_options: registered suites' flags under CLI11: each suite's group in --help,
// defaults shown, ranges checked, a flag two suites declare set for both, a kind clash refused.
#include "xs/cli/common/suite_options.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

namespace xs::cli {
namespace {

struct Values {
  std::string sizes = "1,2";
  int rounds = 3;
  bool no_check = false;
  double scale = 0.5;
};

bench::SuiteDefinition suite(const std::string& id, std::shared_ptr<Values> v, bool shared_int = false) {
  bench::SuiteDefinition d;
  d.id = id;
  d.description = id;
  d.options_title = "Options of the " + id + " suite";
  d.add_options = [v, shared_int](bench::OptionSink& sink) {
    sink.add_text("--sizes", v->sizes, "Sizes");
    if (shared_int) sink.add_text("--rounds", v->sizes, "Rounds as text");
    else sink.add_integer("--rounds", v->rounds, "Rounds", 1, 10);
    sink.add_flag("--no-check", v->no_check, "Skip the check");
    sink.add_number("--scale", v->scale, "Scale");
  };
  d.dry_run = d.run = [](const bench::SuiteContext&) { return 0; };
  return d;
}

void parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes them last-first
  app.parse(args);
}

TEST(SuiteOptions, EachSuitesFlagsSetItsValues) {
  auto a = std::make_shared<Values>();
  bench::SuiteRegistry r;
  r.add(suite("one", a));
  CLI::App app;
  SuiteOptionSink sink(app);
  sink.add_suites(r);
  parse(app, {"--sizes", "8,16", "--rounds", "7", "--no-check", "--scale", "2.5"});
  EXPECT_EQ(a->sizes, "8,16");
  EXPECT_EQ(a->rounds, 7);
  EXPECT_TRUE(a->no_check);
  EXPECT_DOUBLE_EQ(a->scale, 2.5);
  const std::string help = app.help();
  EXPECT_NE(help.find("Options of the one suite"), std::string::npos) << help;
  EXPECT_NE(help.find("--rounds INT:INT in [1, 10]=3"), std::string::npos) << help;
}

TEST(SuiteOptions, RangesAreChecked) {
  auto a = std::make_shared<Values>();
  bench::SuiteRegistry r;
  r.add(suite("one", a));
  CLI::App app;
  SuiteOptionSink sink(app);
  sink.add_suites(r);
  EXPECT_THROW(parse(app, {"--rounds", "11"}), CLI::ValidationError);
}

TEST(SuiteOptions, AFlagOfTwoSuitesSetsBoth) {
  auto a = std::make_shared<Values>(), b = std::make_shared<Values>();
  bench::SuiteRegistry r;
  r.add(suite("one", a));
  r.add(suite("two", b));
  CLI::App app;
  SuiteOptionSink sink(app);
  sink.add_suites(r);
  parse(app, {"--sizes", "4", "--rounds", "2"});
  EXPECT_EQ(a->sizes, "4");
  EXPECT_EQ(b->sizes, "4");
  EXPECT_EQ(b->rounds, 2);
  EXPECT_FALSE(b->no_check);
  EXPECT_NE(app.help().find("Sizes (suites one, two)"), std::string::npos) << app.help();
}

TEST(SuiteOptions, AKindClashIsABuildBug) {
  auto a = std::make_shared<Values>(), b = std::make_shared<Values>();
  bench::SuiteRegistry r;
  r.add(suite("one", a));
  r.add(suite("two", b, /*shared_int=*/true));  // --rounds as text where "one" has an integer
  CLI::App app;
  SuiteOptionSink sink(app);
  EXPECT_THROW(sink.add_suites(r), std::logic_error);
}

}  // namespace
}  // namespace xs::cli
