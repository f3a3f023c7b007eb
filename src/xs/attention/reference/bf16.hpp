// xstage attention host layer: the common bf16 conversions and poison pattern under the attention
// namespace (one implementation: common/bf16.hpp).
#pragma once
#include "xs/common/bf16.hpp"

namespace xs::attention {

using xs::bf16_to_float;
using xs::float_to_bf16;
using xs::kBf16Poison;

}  // namespace xs::attention
