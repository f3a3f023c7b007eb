// xstage common layer: typed sweep axes read with the range grammar (range.hpp), and the iteration spaces that
// combine them into points, so that a suite declares its axes instead of nesting loops (nvbench's
// axis_iteration_space, Google Benchmark's ArgsProduct, in a small form).
//
//   product(a, b, c)  every combination, a slowest and c fastest: the order of `for (a) for (b) for (c)`.
//   zip(a, b)         a and b advance together: point i is (a[i], b[i]); the lengths must be equal.
// Spaces nest: product(targets, zip(ks, bs)) is every target with each (K, B) pair in turn. A point is a
// std::tuple of the axes' values in the order the axes were given, read with structured bindings:
//   for (const auto& [target, heads, m] : product(targets, heads, seq_lens)) { ... }
// An axis keeps its values in the order the range grammar wrote them, duplicates included.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "xs/common/error.hpp"

namespace xs {

// a * b, or UINT64_MAX where that does not fit: a point count too large for 64 bits is over every cap.
inline std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::numeric_limits<std::uint64_t>::max();
  return a * b;
}

namespace detail {
template <class... Spaces>
std::string join_names(const char* separator, const Spaces&... spaces) {
  std::string text;
  ((text += (text.empty() ? "" : separator) + spaces.name()), ...);
  return text;
}
}  // namespace detail

// Walks a space's points by index: point idx is space.at(idx), a tuple made on the fly.
template <class Space>
class PointIterator {
 public:
  using value_type = typename Space::Point;
  using difference_type = std::ptrdiff_t;

  PointIterator() = default;
  PointIterator(const Space* space, std::uint64_t idx) : space_(space), idx_(idx) {}
  value_type operator*() const { return space_->at(idx_); }
  PointIterator& operator++() {
    ++idx_;
    return *this;
  }
  PointIterator operator++(int) {
    PointIterator before = *this;
    ++idx_;
    return before;
  }
  bool operator==(const PointIterator& other) const { return idx_ == other.idx_; }

 private:
  const Space* space_ = nullptr;
  std::uint64_t idx_ = 0;
};

// One named axis of values of type T.
template <class T>
class Axis {
 public:
  using Point = std::tuple<T>;

  Axis() = default;
  // `name` is the flag or the config path the values came from ("--M", "config.blocks[0].K"): errors name it.
  Axis(std::string name, std::vector<T> values) : name_(std::move(name)), values_(std::move(values)) {}

  const std::string& name() const { return name_; }
  const std::vector<T>& values() const { return values_; }
  std::uint64_t size() const { return values_.size(); }
  Point at(std::uint64_t idx) const { return Point(values_[idx]); }
  PointIterator<Axis> begin() const { return {this, 0}; }
  PointIterator<Axis> end() const { return {this, size()}; }

 private:
  std::string name_;
  std::vector<T> values_;
};

using IntegerAxis = Axis<long long>;
using SizeAxis = Axis<std::uint64_t>;  // bytes
using TimeAxis = Axis<double>;         // seconds
using StringAxis = Axis<std::string>;

// The range grammar's readers (range.hpp) as axes named `field`; their input errors name it too.
IntegerAxis integer_axis(std::string_view text, const std::string& field);  // "1,8,33,132"
SizeAxis size_axis(std::string_view text, const std::string& field);        // "1KiB:512KiB:x2"
TimeAxis time_axis(std::string_view text, const std::string& field);        // "0:20us:+1us"
StringAxis string_axis(std::string_view text, const std::string& field);    // "local,host"

// Every combination of its spaces' points; the last space's index runs fastest.
template <class... Spaces>
class Product {
 public:
  static_assert(sizeof...(Spaces) > 0, "a product of no axes");
  using Point = decltype(std::tuple_cat(std::declval<typename Spaces::Point>()...));

  explicit Product(Spaces... spaces) : spaces_(std::move(spaces)...) {}

  std::string name() const {  // "--target x --heads x --M"
    return std::apply([](const auto&... s) { return detail::join_names(" x ", s...); }, spaces_);
  }
  std::uint64_t size() const {  // saturating (saturating_product)
    return std::apply([](const auto&... s) {
      std::uint64_t n = 1;
      ((n = saturating_product(n, s.size())), ...);
      return n;
    }, spaces_);
  }
  Point at(std::uint64_t idx) const { return at(idx, std::index_sequence_for<Spaces...>{}); }
  PointIterator<Product> begin() const { return {this, 0}; }
  PointIterator<Product> end() const { return {this, size()}; }

 private:
  // idx as mixed-radix digits, one per space, the last space's digit the least significant.
  template <std::size_t... I>
  Point at(std::uint64_t idx, std::index_sequence<I...>) const {
    const std::array<std::uint64_t, sizeof...(Spaces)> sizes{std::get<I>(spaces_).size()...};
    std::array<std::uint64_t, sizeof...(Spaces)> digits{};
    for (std::size_t f = sizes.size(); f-- > 0;) {
      digits[f] = idx % sizes[f];
      idx /= sizes[f];
    }
    return std::tuple_cat(std::get<I>(spaces_).at(digits[I])...);
  }

  std::tuple<Spaces...> spaces_;
};

// Its spaces advanced together: point i joins each space's point i. Spaces of unequal sizes are an input error
// naming the first space whose size differs from the first one's.
template <class... Spaces>
class Zip {
 public:
  static_assert(sizeof...(Spaces) > 0, "a zip of no axes");
  using Point = decltype(std::tuple_cat(std::declval<typename Spaces::Point>()...));

  explicit Zip(Spaces... spaces) : spaces_(std::move(spaces)...) {
    std::apply([](const auto& first, const auto&... rest) { (check_size(first, rest), ...); }, spaces_);
  }

  std::string name() const {  // "(--K, --B)"
    return "(" + std::apply([](const auto&... s) { return detail::join_names(", ", s...); }, spaces_) + ")";
  }
  std::uint64_t size() const { return std::get<0>(spaces_).size(); }
  Point at(std::uint64_t idx) const {
    return std::apply([idx](const auto&... s) { return std::tuple_cat(s.at(idx)...); }, spaces_);
  }
  PointIterator<Zip> begin() const { return {this, 0}; }
  PointIterator<Zip> end() const { return {this, size()}; }

 private:
  static std::string count(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " value" : " values"); }
  template <class First, class Other>
  static void check_size(const First& first, const Other& other) {
    if (other.size() != first.size())
      throw input_error(other.name(), count(other.size()) + ", but " + first.name() + " has " + count(first.size()) +
                                          "; zipped axes advance together and need as many values each");
  }

  std::tuple<Spaces...> spaces_;
};

template <class... Spaces>
Product<std::decay_t<Spaces>...> product(Spaces&&... spaces) {
  return Product<std::decay_t<Spaces>...>(std::forward<Spaces>(spaces)...);
}

template <class... Spaces>
Zip<std::decay_t<Spaces>...> zip(Spaces&&... spaces) {
  return Zip<std::decay_t<Spaces>...>(std::forward<Spaces>(spaces)...);
}

}  // namespace xs
