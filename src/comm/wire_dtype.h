// Conversions between float and the 16-bit wire precisions, and the reduction kernels that
// add wire-precision buffers in float. All loops are written to vectorise (F16C is used for
// fp16 when the compiler targets it).
//
// Rounding: float -> bf16 and float -> fp16 round to nearest, ties to even. NaN stays NaN.
// fp16 overflow: like IEEE 754 (and F16C), a float whose magnitude rounds above the largest
// half (65504) becomes +/-infinity; it does not saturate. Callers that sum many values in fp16
// should pre-scale (ReduceOp::kMean multiplies by 1/N before converting for this reason).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stepscope::comm {

// One bf16 / fp16 value as stored on the wire.
using Bf16Bits = uint16_t;
using Fp16Bits = uint16_t;

Bf16Bits FloatToBf16(float value);
float Bf16ToFloat(Bf16Bits bits);
Fp16Bits FloatToFp16(float value);
float Fp16ToFloat(Fp16Bits bits);

// Whole-buffer conversions: dst[i] = convert(src[i]) for i < n.
void FloatToBf16(const float* src, Bf16Bits* dst, size_t n);
void Bf16ToFloat(const Bf16Bits* src, float* dst, size_t n);
void FloatToFp16(const float* src, Fp16Bits* dst, size_t n);
void Fp16ToFloat(const Fp16Bits* src, float* dst, size_t n);

// acc[i] = round(float(acc[i]) + float(in[i])): one hop of a reduction at wire precision.
void AccumulateBf16(Bf16Bits* acc, const Bf16Bits* in, size_t n);
void AccumulateFp16(Fp16Bits* acc, const Fp16Bits* in, size_t n);
void AccumulateFp32(float* acc, const float* in, size_t n);

// sum[i] += float(in[i]): reduces wire-precision inputs into a float accumulator.
void AddBf16ToFloat(const Bf16Bits* in, float* sum, size_t n);
void AddFp16ToFloat(const Fp16Bits* in, float* sum, size_t n);

// One pass each for the reduction that reads float inputs and rounds them to bf16 on the way
// (the shared-memory path's resident buffers): sum[i] += float(bf16(in[i])), and
// data[i] = float(bf16(data[i])). Bit-identical to converting through a bf16 buffer.
void AddBf16RoundedToFloat(const float* in, float* sum, size_t n);
void RoundToBf16(float* data, size_t n);

// data[i] *= factor.
void Scale(float* data, float factor, size_t n);

}  // namespace stepscope::comm
