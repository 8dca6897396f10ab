#include "comm/wire_dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace stepscope::comm {
namespace {

float FromBits(uint32_t u) { return std::bit_cast<float>(u); }

TEST(Bf16, RepresentableValuesRoundTripExactly) {
  for (float v : {0.0f, -0.0f, 1.0f, -2.5f, 256.0f, 3.0e38f, 1.0e-38f, 0.0078125f}) {
    const float rounded = Bf16ToFloat(FloatToBf16(v));
    if (Bf16ToFloat(FloatToBf16(rounded)) != rounded) ADD_FAILURE() << v;
  }
  // Every bf16 bit pattern that is not NaN converts to float and back unchanged.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = Bf16ToFloat(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToBf16(f), b) << b;
  }
}

TEST(Bf16, RoundsToNearestTiesToEven) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to the even mantissa (1.0).
  EXPECT_EQ(Bf16ToFloat(FloatToBf16(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even (1 + 2^-6).
  EXPECT_EQ(Bf16ToFloat(FloatToBf16(1.0f + 3 * std::ldexp(1.0f, -8))), 1.0f + std::ldexp(1.0f, -6));
  // Just above halfway rounds up.
  EXPECT_EQ(FloatToBf16(FromBits(0x3f808001u)), 0x3f81u);
  EXPECT_EQ(FloatToBf16(FromBits(0x3f807fffu)), 0x3f80u);
  // Largest finite floats round to infinity, as IEEE rounding demands.
  EXPECT_TRUE(std::isinf(Bf16ToFloat(FloatToBf16(std::numeric_limits<float>::max()))));
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(std::nanf("")))));
  // A NaN whose payload sits in the low bits must not become infinity.
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(FromBits(0x7f800001u)))));
}

TEST(Fp16, EveryHalfRoundTripsExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = Fp16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToFp16(f), h) << h;
  }
  EXPECT_EQ(Fp16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(Fp16ToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(Fp16ToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
}

TEST(Fp16, RoundsToNearestEvenAndOverflowsToInfinity) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even.
  EXPECT_EQ(FloatToFp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(FloatToFp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Subnormals: 2^-25 is halfway between 0 and 2^-24 (ties to even: 0); 3 * 2^-25 -> 2^-23.
  EXPECT_EQ(FloatToFp16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(FloatToFp16(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(FloatToFp16(-std::ldexp(1.0f, -30)), 0x8000);  // underflow keeps the sign
  // Overflow: 65519 still rounds to 65504, 65520 and above become infinity (no saturation).
  EXPECT_EQ(FloatToFp16(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToFp16(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToFp16(-1.0e6f), 0xfc00);
  EXPECT_TRUE(std::isnan(Fp16ToFloat(FloatToFp16(std::nanf("")))));
}

// The buffer routines (vectorised, F16C where available) agree with the scalar ones,
// including the tail that is not a multiple of the vector width.
TEST(WireBuffers, AgreeWithScalarConversions) {
  const size_t n = 1037;
  std::vector<float> x(n), back(n);
  for (size_t i = 0; i < n; ++i) x[i] = std::sin(0.37f * i) * std::ldexp(1.0f, int(i % 30) - 24);
  std::vector<uint16_t> h(n), b(n);
  FloatToFp16(x.data(), h.data(), n);
  FloatToBf16(x.data(), b.data(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(h[i], FloatToFp16(x[i])) << i;
    ASSERT_EQ(b[i], FloatToBf16(x[i])) << i;
  }
  Fp16ToFloat(h.data(), back.data(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], Fp16ToFloat(h[i]));
  Bf16ToFloat(b.data(), back.data(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], Bf16ToFloat(b[i]));

  std::vector<uint16_t> acc_h = h, acc_b = b;
  AccumulateFp16(acc_h.data(), h.data(), n);
  AccumulateBf16(acc_b.data(), b.data(), n);
  std::vector<float> sum(n, 1.0f);
  AddFp16ToFloat(h.data(), sum.data(), n);
  for (size_t i = 0; i < n; ++i) {
    // Doubling is exact unless it overflows, which these magnitudes cannot.
    ASSERT_EQ(Fp16ToFloat(acc_h[i]), 2 * Fp16ToFloat(h[i])) << i;
    ASSERT_EQ(Bf16ToFloat(acc_b[i]), 2 * Bf16ToFloat(b[i])) << i;
    ASSERT_EQ(sum[i], 1.0f + Fp16ToFloat(h[i])) << i;
  }
}

// The fused bf16 loops give the same bits as the two-pass route through a bf16 buffer, NaN and
// infinity included.
TEST(WireBuffers, FusedBf16LoopsMatchTheTwoPassRoute) {
  const size_t n = 1037;
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = std::cos(0.91f * i) * std::ldexp(1.0f, int(i % 40) - 20);
  x[5] = std::nanf("");
  x[6] = std::numeric_limits<float>::infinity();
  x[7] = std::numeric_limits<float>::max();
  std::vector<uint16_t> wire(n);
  std::vector<float> two_pass(n, 0.5f), fused(n, 0.5f);
  FloatToBf16(x.data(), wire.data(), n);
  AddBf16ToFloat(wire.data(), two_pass.data(), n);
  AddBf16RoundedToFloat(x.data(), fused.data(), n);
  std::vector<float> rounded = x;
  RoundToBf16(rounded.data(), n);
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(two_pass[i])) {
      ASSERT_TRUE(std::isnan(fused[i])) << i;
    } else {
      ASSERT_EQ(fused[i], two_pass[i]) << i;
    }
    const float expected = Bf16ToFloat(FloatToBf16(x[i]));
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(rounded[i])) << i;
    } else {
      ASSERT_EQ(rounded[i], expected) << i;
    }
  }
}

}  // namespace
}  // namespace stepscope::comm
