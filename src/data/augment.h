// Image augmentation for (H, W) single-channel uint8 images: random crop from a zero-padded
// image plus random horizontal flip. Parameters are drawn per example from a key, so the
// result depends only on (seed, epoch, batch index, example index), never on which thread or
// rank decodes the example.
#pragma once

#include <cstdint>

namespace stepscope::data {

struct CropFlip {
  int shift_y = 0;    // in [-pad, pad]; 0 keeps the image in place
  int shift_x = 0;    // in [-pad, pad]
  bool flip = false;  // mirror left-right after the crop
};

// Draws a CropFlip: shifts uniform in [-pad, pad], flip with probability 1/2.
CropFlip DrawCropFlip(uint64_t key, int pad);

// dst(y, x) = src(y + shift_y, x' + shift_x) with x' = (flip ? W-1-x : x), and 0 where that
// falls outside the image: equivalent to padding with `pad` zero pixels on every side, taking
// the (H, W) window at offset (pad + shift_y, pad + shift_x), then mirroring. `src` and `dst`
// are (H, W) row-major and must not overlap.
void ApplyCropFlip(const uint8_t* src, int height, int width, const CropFlip& op, uint8_t* dst);

}  // namespace stepscope::data
