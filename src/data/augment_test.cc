#include "data/augment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace stepscope::data {
namespace {

constexpr int kH = 5;
constexpr int kW = 4;

std::vector<uint8_t> Ramp() {
  std::vector<uint8_t> img(kH * kW);
  for (int i = 0; i < kH * kW; ++i) img[i] = static_cast<uint8_t>(i + 1);  // no zero pixel
  return img;
}

TEST(Augment, IdentityWithoutShiftOrFlip) {
  const auto src = Ramp();
  std::vector<uint8_t> dst(src.size());
  ApplyCropFlip(src.data(), kH, kW, CropFlip{0, 0, false}, dst.data());
  EXPECT_EQ(dst, src);
}

TEST(Augment, FlipWithoutShiftMirrorsEachRow) {
  const auto src = Ramp();
  std::vector<uint8_t> dst(src.size());
  ApplyCropFlip(src.data(), kH, kW, CropFlip{0, 0, true}, dst.data());
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) EXPECT_EQ(dst[y * kW + x], src[y * kW + (kW - 1 - x)]);
  }
  // Same pixel multiset.
  auto a = src, b = dst;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
}

TEST(Augment, ShiftMovesContentAndPadsWithZeros) {
  const auto src = Ramp();
  std::vector<uint8_t> dst(src.size());
  ApplyCropFlip(src.data(), kH, kW, CropFlip{1, -2, false}, dst.data());
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      const int sy = y + 1, sx = x - 2;
      const uint8_t want = (sy < kH && sx >= 0) ? src[sy * kW + sx] : 0;
      EXPECT_EQ(dst[y * kW + x], want) << y << "," << x;
    }
  }
  // Exactly the pixels that stayed inside survive: (kH-1) rows x (kW-2) columns.
  const auto zeros = std::count(dst.begin(), dst.end(), 0);
  EXPECT_EQ(zeros, kH * kW - (kH - 1) * (kW - 2));
}

TEST(Augment, ShiftThenFlipEqualsMirrorOfShift) {
  const auto src = Ramp();
  std::vector<uint8_t> shifted(src.size()), both(src.size()), mirrored(src.size());
  ApplyCropFlip(src.data(), kH, kW, CropFlip{-1, 1, false}, shifted.data());
  ApplyCropFlip(src.data(), kH, kW, CropFlip{-1, 1, true}, both.data());
  ApplyCropFlip(shifted.data(), kH, kW, CropFlip{0, 0, true}, mirrored.data());
  EXPECT_EQ(both, mirrored);
}

TEST(Augment, DrawIsDeterministicAndCoversTheRange) {
  std::vector<int> xs(5, 0), ys(5, 0);
  int flips = 0;
  for (uint64_t key = 0; key < 2000; ++key) {
    const CropFlip a = DrawCropFlip(key, 2);
    const CropFlip b = DrawCropFlip(key, 2);
    ASSERT_EQ(a.shift_x, b.shift_x);
    ASSERT_EQ(a.shift_y, b.shift_y);
    ASSERT_EQ(a.flip, b.flip);
    ASSERT_GE(a.shift_x, -2);
    ASSERT_LE(a.shift_x, 2);
    ASSERT_GE(a.shift_y, -2);
    ASSERT_LE(a.shift_y, 2);
    ++xs[a.shift_x + 2];
    ++ys[a.shift_y + 2];
    flips += a.flip;
  }
  for (int i = 0; i < 5; ++i) {
    EXPECT_GT(xs[i], 250);  // expected 400 each
    EXPECT_GT(ys[i], 250);
  }
  EXPECT_GT(flips, 850);  // expected 1000
  EXPECT_LT(flips, 1150);
}

}  // namespace
}  // namespace stepscope::data
