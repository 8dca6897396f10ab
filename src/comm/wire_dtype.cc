#include "comm/wire_dtype.h"

#include <bit>
#include <cstring>

#include "core/cpu_dispatch.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
// The fp16 loops use F16C when the CPU has it, whatever the build targets: the vector loops are
// compiled for AVX + F16C and chosen at run time.
#define STEPSCOPE_F16C_PATH 1
#define STEPSCOPE_F16C __attribute__((target("avx,f16c")))
#else
#define STEPSCOPE_F16C_PATH 0
#endif

namespace stepscope::comm {
namespace {

// Round-to-nearest-even truncation of the low 16 bits; NaNs are kept quiet NaNs.
inline uint16_t Bf16FromBits(uint32_t u) {
  const bool is_nan = (u & 0x7fffffffu) > 0x7f800000u;
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return is_nan ? static_cast<uint16_t>((u >> 16) | 0x40u) : static_cast<uint16_t>(rounded);
}

inline float FloatFromBf16(uint16_t b) { return std::bit_cast<float>(uint32_t{b} << 16); }

// Portable IEEE half conversion (used when F16C is not available, and for scalars).
inline uint16_t HalfFromFloat(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520
  if (abs >= 0x38800000u) {                                              // normal half
    const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u) - (112u << 23);
    return static_cast<uint16_t>(sign | (rounded >> 13));
  }
  // Subnormal half (or zero): add 0.5 so the float adder performs the rounding to 2^-24 steps.
  const float magnitude = std::bit_cast<float>(abs);
  const uint32_t r = std::bit_cast<uint32_t>(magnitude + 0.5f) - 0x3f000000u;
  return static_cast<uint16_t>(sign | r);
}

inline float FloatFromHalf(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float value = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return std::bit_cast<float>(std::bit_cast<uint32_t>(value) | sign);
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

}  // namespace

Bf16Bits FloatToBf16(float value) { return Bf16FromBits(std::bit_cast<uint32_t>(value)); }
float Bf16ToFloat(Bf16Bits bits) { return FloatFromBf16(bits); }
Fp16Bits FloatToFp16(float value) { return HalfFromFloat(value); }
float Fp16ToFloat(Fp16Bits bits) { return FloatFromHalf(bits); }

STEPSCOPE_DISPATCH void FloatToBf16(const float* src, Bf16Bits* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, src + i, 4);
    dst[i] = Bf16FromBits(u);
  }
}

STEPSCOPE_DISPATCH void Bf16ToFloat(const Bf16Bits* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = uint32_t{src[i]} << 16;
    std::memcpy(dst + i, &u, 4);
  }
}

#if STEPSCOPE_F16C_PATH
namespace {

// CPUID leaf 1: ECX bit 28 is AVX, bit 29 F16C (and the OS must save the AVX registers, bit 27
// OSXSAVE; every OS that runs this code does).
bool CpuHasF16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    return (ecx & (1u << 27)) && (ecx & (1u << 28)) && (ecx & (1u << 29));
  }();
  return has;
}

// Each F16C loop handles the multiples of 8 and returns how many it did; the scalar loop after
// it finishes the rest (or all, on a CPU without F16C).
STEPSCOPE_F16C size_t FloatToFp16F16c(const float* src, Fp16Bits* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  return i;
}

STEPSCOPE_F16C size_t Fp16ToFloatF16c(const Fp16Bits* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  return i;
}

STEPSCOPE_F16C size_t AccumulateFp16F16c(Fp16Bits* acc, const Fp16Bits* in, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 a = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(acc + i)));
    const __m256 b = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + i),
                     _mm256_cvtps_ph(_mm256_add_ps(a, b), _MM_FROUND_TO_NEAREST_INT));
  }
  return i;
}

STEPSCOPE_F16C size_t AddFp16ToFloatF16c(const Fp16Bits* in, float* sum, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 a = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_ps(sum + i, _mm256_add_ps(_mm256_loadu_ps(sum + i), a));
  }
  return i;
}

}  // namespace
#endif

void FloatToFp16(const float* src, Fp16Bits* dst, size_t n) {
  size_t i = 0;
#if STEPSCOPE_F16C_PATH
  if (CpuHasF16c()) i = FloatToFp16F16c(src, dst, n);
#endif
  for (; i < n; ++i) dst[i] = HalfFromFloat(src[i]);
}

void Fp16ToFloat(const Fp16Bits* src, float* dst, size_t n) {
  size_t i = 0;
#if STEPSCOPE_F16C_PATH
  if (CpuHasF16c()) i = Fp16ToFloatF16c(src, dst, n);
#endif
  for (; i < n; ++i) dst[i] = FloatFromHalf(src[i]);
}

STEPSCOPE_DISPATCH void AccumulateBf16(Bf16Bits* acc, const Bf16Bits* in, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float sum = FloatFromBf16(acc[i]) + FloatFromBf16(in[i]);
    acc[i] = Bf16FromBits(std::bit_cast<uint32_t>(sum));
  }
}

void AccumulateFp16(Fp16Bits* acc, const Fp16Bits* in, size_t n) {
  size_t i = 0;
#if STEPSCOPE_F16C_PATH
  if (CpuHasF16c()) i = AccumulateFp16F16c(acc, in, n);
#endif
  for (; i < n; ++i) acc[i] = HalfFromFloat(FloatFromHalf(acc[i]) + FloatFromHalf(in[i]));
}

STEPSCOPE_DISPATCH void AccumulateFp32(float* acc, const float* in, size_t n) {
  for (size_t i = 0; i < n; ++i) acc[i] += in[i];
}

STEPSCOPE_DISPATCH void AddBf16ToFloat(const Bf16Bits* in, float* sum, size_t n) {
  for (size_t i = 0; i < n; ++i) sum[i] += FloatFromBf16(in[i]);
}

STEPSCOPE_DISPATCH void AddBf16RoundedToFloat(const float* in, float* sum, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    sum[i] += FloatFromBf16(Bf16FromBits(std::bit_cast<uint32_t>(in[i])));
  }
}

STEPSCOPE_DISPATCH void RoundToBf16(float* data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    data[i] = FloatFromBf16(Bf16FromBits(std::bit_cast<uint32_t>(data[i])));
  }
}

void AddFp16ToFloat(const Fp16Bits* in, float* sum, size_t n) {
  size_t i = 0;
#if STEPSCOPE_F16C_PATH
  if (CpuHasF16c()) i = AddFp16ToFloatF16c(in, sum, n);
#endif
  for (; i < n; ++i) sum[i] += FloatFromHalf(in[i]);
}

STEPSCOPE_DISPATCH void Scale(float* data, float factor, size_t n) {
  for (size_t i = 0; i < n; ++i) data[i] *= factor;
}

}  // namespace stepscope::comm
