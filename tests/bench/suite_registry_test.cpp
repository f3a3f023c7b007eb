// Tests for bench/suite_registry: registration rules, lookup with the accepted ids on a miss, the --list
// text, and that a suite's options reach its own values through an OptionSink.
#include "xs/bench/suite_registry.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <stdexcept>

#include "xs/common/error.hpp"

namespace xs::bench {
namespace {

SuiteDefinition suite(const std::string& id, int code = 0) {
  SuiteDefinition d;
  d.id = id;
  d.description = "the " + id + " suite";
  d.dry_run = [](const SuiteContext&) { return 0; };
  d.run = [code](const SuiteContext&) { return code; };
  return d;
}

TEST(SuiteRegistry, FindsSuitesInRegistrationOrder) {
  SuiteRegistry r;
  r.add(suite("b.second", 1));
  r.add(suite("a.first", 7));
  ASSERT_EQ(r.suites().size(), 2u);
  EXPECT_EQ(r.suites()[0].id, "b.second");
  EXPECT_EQ(r.at("a.first").run(SuiteContext{}), 7);
  EXPECT_EQ(r.list_text(), "b.second                       the b.second suite\n"
                           "a.first                        the a.first suite\n");
}

TEST(SuiteRegistry, UnknownSuiteIsBadInputListingTheAcceptedIds) {
  SuiteRegistry r;
  r.add(suite("x.one"));
  r.add(suite("x.two"));
  try {
    r.at("x.three");
    FAIL() << "accepted an unknown suite";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_EQ(e.field(), "suite");
    EXPECT_NE(std::string(e.what()).find("unknown suite 'x.three'; accepted: x.one, x.two"), std::string::npos)
        << e.what();
  }
}

TEST(SuiteRegistry, RefusesIncompleteOrDuplicateSuites) {
  SuiteRegistry r;
  r.add(suite("x.one"));
  EXPECT_THROW(r.add(suite("x.one")), std::logic_error);
  EXPECT_THROW(r.add(suite("")), std::logic_error);
  SuiteDefinition no_run = suite("x.two");
  no_run.run = nullptr;
  EXPECT_THROW(r.add(no_run), std::logic_error);
  SuiteDefinition untitled = suite("x.three");
  untitled.add_options = [](OptionSink&) {};
  EXPECT_THROW(r.add(untitled), std::logic_error);
  EXPECT_EQ(r.suites().size(), 1u);
}

// Records what a suite declares and sets values as a parser would.
class FakeSink : public OptionSink {
 public:
  std::map<std::string, std::string*> texts;
  std::map<std::string, int*> integers;
  std::map<std::string, bool*> flags;
  void add_text(const std::string& flag, std::string& value, const std::string&) override { texts[flag] = &value; }
  void add_integer(const std::string& flag, int& value, const std::string&, int, int) override {
    integers[flag] = &value;
  }
  void add_number(const std::string&, double&, const std::string&) override {}
  void add_flag(const std::string& flag, bool& value, const std::string&) override { flags[flag] = &value; }
};

TEST(SuiteRegistry, OptionsReachTheSuiteThatDeclaredThem) {
  struct Flags {
    std::string sizes = "1,2";
    int reps = 3;
  };
  auto flags = std::make_shared<Flags>();
  SuiteDefinition d = suite("x.opts");
  d.options_title = "Options of x.opts";
  d.add_options = [flags](OptionSink& sink) {
    sink.add_text("--sizes", flags->sizes, "sizes");
    sink.add_integer("--rounds", flags->reps, "rounds", 1, 10);
  };
  d.run = [flags](const SuiteContext&) { return flags->reps + static_cast<int>(flags->sizes.size()); };
  SuiteRegistry r;
  r.add(d);
  FakeSink sink;
  r.at("x.opts").add_options(sink);
  ASSERT_EQ(sink.texts.count("--sizes"), 1u);
  *sink.texts["--sizes"] = "1,2,3,4";  // as parsing "--sizes 1,2,3,4" would
  *sink.integers["--rounds"] = 9;
  EXPECT_EQ(r.at("x.opts").run(SuiteContext{}), 9 + 7);
}

}  // namespace
}  // namespace xs::bench
