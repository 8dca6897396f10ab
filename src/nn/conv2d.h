// 2-D convolution (stride 1, square kernel, zero padding) via im2col + OpenBLAS sgemm, as a
// forward/backward pair over raw buffers.
#pragma once

namespace stepscope::nn {

// Output spatial size of a stride-1 convolution: H + 2*pad - K + 1.
inline int ConvOutSize(int H, int K, int pad) { return H + 2 * pad - K + 1; }

// out (B,OC,OH,OW) = conv(inp (B,C,H,W), weight (OC,C,K,K)) + bias (OC).
// col (B, C*K*K, OH*OW) receives the unfolded input (im2col); keep it for backward.
void Conv2dForward(float* out, float* col, const float* inp, const float* weight, const float* bias,
                   int B, int C, int H, int W, int OC, int K, int pad);

// Backward of the line above. Accumulates (+=) into dweight (OC,C,K,K), dbias (OC) and dinp
// (B,C,H,W); dinp may be nullptr to skip the input gradient, in which case dcol is unused;
// otherwise dcol is scratch of C*K*K*OH*OW floats.
void Conv2dBackward(float* dinp, float* dcol, float* dweight, float* dbias, const float* dout,
                    const float* col, const float* weight, int B, int C, int H, int W, int OC,
                    int K, int pad);

}  // namespace stepscope::nn
