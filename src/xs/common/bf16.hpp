// xstage common layer: bf16 <-> float on the host (round-to-nearest-even), and the poison pattern outputs
// are filled with before a run (0xFFFF: a NaN no finite result can equal). Shared by every application
// slice's CPU reference (attention, moe), so neither imports the other.
#pragma once
#include <cstdint>
#include <cstring>

namespace xs {

inline constexpr std::uint16_t kBf16Poison = 0xFFFF;

inline float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t w = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t w;
  std::memcpy(&w, &f, sizeof w);
  if ((w & 0x7F800000u) == 0x7F800000u && (w & 0x007FFFFFu) != 0) return 0x7FC0;  // NaN stays NaN
  w += 0x7FFFu + ((w >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(w >> 16);
}

}  // namespace xs
