// xstage report layer: strict ISO 8601 instants (see utc_instant.hpp).
#include "xs/report/utc_instant.hpp"

#include <cctype>

namespace xs::report {
namespace {

// Digits text[pos, pos + n) as a number; nullopt unless all are ASCII digits.
std::optional<int> digits(const std::string& text, std::size_t pos, std::size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
int days_in_month(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : kDays[m - 1];
}

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's civil algorithm).
std::int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = static_cast<int>(y - era * 400);
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

std::optional<double> parse_utc_instant(const std::string& t) {
  // YYYY-MM-DDTHH:MM:SS: 19 characters with the separators in place
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != 't') || t[13] != ':' || t[16] != ':')
    return std::nullopt;
  const auto y = digits(t, 0, 4), mo = digits(t, 5, 2), d = digits(t, 8, 2);
  const auto h = digits(t, 11, 2), mi = digits(t, 14, 2), s = digits(t, 17, 2);
  if (!y || !mo || !d || !h || !mi || !s) return std::nullopt;
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > days_in_month(*y, *mo) || *h > 23 || *mi > 59 || *s > 60)
    return std::nullopt;
  if (*s == 60 && !(*h == 23 && *mi == 59)) return std::nullopt;  // a leap second ends a UTC day
  std::size_t pos = 19;
  double fraction = 0;
  if (t[pos] == '.') {  // a fraction: at least one digit
    const std::size_t start = ++pos;
    double scale = 0.1;
    while (pos < t.size() && std::isdigit(static_cast<unsigned char>(t[pos]))) {
      fraction += scale * (t[pos] - '0');
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  if (pos >= t.size()) return std::nullopt;  // no zone: local time is not an instant
  int offset_s = 0;
  if (t[pos] == 'Z' || t[pos] == 'z') {
    ++pos;
  } else if (t[pos] == '+' || t[pos] == '-') {
    const auto oh = digits(t, pos + 1, 2), om = digits(t, pos + 4, 2);
    if (!oh || !om || pos + 3 >= t.size() || t[pos + 3] != ':' || *oh > 23 || *om > 59) return std::nullopt;
    offset_s = (t[pos] == '+' ? 1 : -1) * (*oh * 3600 + *om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != t.size()) return std::nullopt;
  return static_cast<double>(days_from_civil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + *s - offset_s) + fraction;
}

std::optional<double> parse_record_instant(const std::string& text, double now_s) {
  constexpr double kYear2000 = 946684800;  // 2000-01-01T00:00:00Z
  const auto t = parse_utc_instant(text);
  if (!t || *t < kYear2000 || *t > now_s + 86400) return std::nullopt;
  return t;
}

namespace {
std::optional<int> order(std::optional<double> x, std::optional<double> y) {
  if (!x || !y) return std::nullopt;
  return *x < *y ? -1 : (*x > *y ? 1 : 0);
}
}  // namespace

std::optional<int> compare_instants(const std::string& a, const std::string& b) {
  return order(parse_utc_instant(a), parse_utc_instant(b));
}

std::optional<int> compare_record_instants(const std::string& a, const std::string& b, double now_s) {
  return order(parse_record_instant(a, now_s), parse_record_instant(b, now_s));
}

}  // namespace xs::report
