// xstage report layer: CSV and Markdown writers for report::Table (see table.hpp).
#include "xs/report/table.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace xs::report {
namespace {

std::string number_text(double x) {
  if (!std::isfinite(x)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  // %.17g prints 0.1 as 0.10000000000000001: use the shortest form that reads back identically.
  for (int precision = 6; precision < 17; ++precision) {
    char shorter[40];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, x);
    if (std::strtod(shorter, nullptr) == x) return shorter;
  }
  return buf;
}

std::string csv_field(const Cell& cell) {
  if (const double* x = std::get_if<double>(&cell)) return number_text(*x);
  const std::string& s = std::get<std::string>(cell);
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string md_field(const Cell& cell) {
  if (const double* x = std::get_if<double>(&cell)) return std::isfinite(*x) ? number_text(*x) : "-";
  std::string out;
  for (char c : std::get<std::string>(cell)) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

template <class Field>
std::string join_row(const std::vector<Cell>& row, Field field, const char* sep, const char* open,
                     const char* close) {
  std::string line = open;
  for (std::size_t i = 0; i < row.size(); ++i) line += (i ? sep : "") + field(row[i]);
  return line + close + "\n";
}

std::vector<Cell> header_cells(const Table& table) { return {table.columns.begin(), table.columns.end()}; }

}  // namespace

void Table::add_row(std::vector<Cell> row) {
  if (row.size() != columns.size())
    throw std::logic_error("table row has " + std::to_string(row.size()) + " cells, expected " +
                           std::to_string(columns.size()));
  rows.push_back(std::move(row));
}

std::string to_csv(const Table& table) {
  std::string out = join_row(header_cells(table), csv_field, ",", "", "");
  for (const auto& row : table.rows) out += join_row(row, csv_field, ",", "", "");
  return out;
}

std::string to_markdown(const Table& table) {
  std::string out = join_row(header_cells(table), md_field, " | ", "| ", " |");
  std::string rule = "|";
  for (std::size_t i = 0; i < table.columns.size(); ++i) rule += " --- |";
  out += rule + "\n";
  for (const auto& row : table.rows) out += join_row(row, md_field, " | ", "| ", " |");
  return out;
}

void write_csv(const Table& table, std::FILE* out) { std::fputs(to_csv(table).c_str(), out); }
void write_markdown(const Table& table, std::FILE* out) { std::fputs(to_markdown(table).c_str(), out); }

}  // namespace xs::report
