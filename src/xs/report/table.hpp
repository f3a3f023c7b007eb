// xstage report layer: one plain table (named columns, rows of numbers or text) written as CSV (RFC 4180)
// or as a GitHub Markdown table. Every `--csv FILE` / `--md` output of the CLIs goes through this.
#pragma once
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

namespace xs::report {

// A number is written with full precision ("%.17g"; NaN/inf as an empty CSV field, "-" in Markdown);
// text is quoted in CSV where it holds a comma, quote or newline, and '|' is escaped in Markdown.
using Cell = std::variant<double, std::string>;

struct Table {
  std::vector<std::string> columns;     // header names, with units in the name ("T_iss_s", "R_Bps")
  std::vector<std::vector<Cell>> rows;  // each row has columns.size() cells
  void add_row(std::vector<Cell> row);  // throws std::logic_error on a wrong cell count
};

std::string to_csv(const Table& table);
std::string to_markdown(const Table& table);
void write_csv(const Table& table, std::FILE* out);
void write_markdown(const Table& table, std::FILE* out);

}  // namespace xs::report
