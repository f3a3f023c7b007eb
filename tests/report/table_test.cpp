// Tests for the CSV / Markdown table writer (report layer).
#include "xs/report/table.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace xs::report {
namespace {

Table sample() {
  Table t{{"id", "T_iss_s", "note"}, {}};
  t.add_row({std::string("remote_store.periodic.host"), 1.9e-7, std::string("plain")});
  t.add_row({std::string("a,b"), std::nan(""), std::string("say \"hi\"\nbye")});
  t.add_row({std::string("x|y"), 0.1, std::string("")});
  return t;
}

TEST(Table, CsvQuotesFieldsAndLeavesNonFiniteEmpty) {
  EXPECT_EQ(to_csv(sample()),
            "id,T_iss_s,note\nremote_store.periodic.host,1.9e-07,plain\n\"a,b\",,\"say \"\"hi\"\"\nbye\"\nx|y,0.1,\n");
}

TEST(Table, MarkdownEscapesPipesAndMarksMissingNumbers) {
  EXPECT_EQ(to_markdown(sample()),
            "| id | T_iss_s | note |\n| --- | --- | --- |\n| remote_store.periodic.host | 1.9e-07 | plain |\n"
            "| a,b | - | say \"hi\" bye |\n| x\\|y | 0.1 |  |\n");
}

TEST(Table, NumbersReadBackExactly) {
  Table t{{"x"}, {}};
  const double x = 52.61234567891234e9;
  t.add_row({x});
  const std::string csv = to_csv(t);
  EXPECT_EQ(std::strtod(csv.substr(2).c_str(), nullptr), x);
}

TEST(Table, RejectsRowsOfTheWrongWidth) {
  Table t{{"a", "b"}, {}};
  EXPECT_THROW(t.add_row({1.0}), std::logic_error);
}

}  // namespace
}  // namespace xs::report
