#include "data/augment.h"

#include "data/prng.h"

namespace stepscope::data {

CropFlip DrawCropFlip(uint64_t key, int pad) {
  Xoshiro256 rng(key);
  CropFlip op;
  const auto span = static_cast<uint64_t>(2 * pad + 1);
  op.shift_y = static_cast<int>(rng.Below(span)) - pad;
  op.shift_x = static_cast<int>(rng.Below(span)) - pad;
  op.flip = (rng.Next() >> 63) != 0;
  return op;
}

void ApplyCropFlip(const uint8_t* src, int height, int width, const CropFlip& op, uint8_t* dst) {
  for (int y = 0; y < height; ++y) {
    const int sy = y + op.shift_y;
    uint8_t* row = dst + y * width;
    if (sy < 0 || sy >= height) {
      for (int x = 0; x < width; ++x) row[x] = 0;
      continue;
    }
    const uint8_t* srow = src + sy * width;
    for (int x = 0; x < width; ++x) {
      const int sx = (op.flip ? width - 1 - x : x) + op.shift_x;
      row[x] = (sx >= 0 && sx < width) ? srow[sx] : 0;
    }
  }
}

}  // namespace stepscope::data
