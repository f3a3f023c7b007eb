// xstage report layer: "fnv1a64:<16 hex digits>" of a file's bytes, the provenance hash every judged or
// predicted result records for the calibration it came from.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace xs::report {

inline std::string fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  return fmt::format("fnv1a64:{:016x}", h);
}

}  // namespace xs::report
