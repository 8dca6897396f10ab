#include "nn/maxpool2d.h"

#include "core/cpu_dispatch.h"

namespace stepscope::nn {

STEPSCOPE_DISPATCH void MaxPool2dForward(float* out, int32_t* argmax, const float* inp, int B, int C, int H, int W) {
  const int OH = H / 2, OW = W / 2;
  for (long plane = 0; plane < static_cast<long>(B) * C; ++plane) {
    const float* x = inp + plane * H * W;  // x is (H,W)
    float* y = out + plane * OH * OW;      // y is (OH,OW)
    int32_t* idx = argmax + plane * OH * OW;
    for (int oh = 0; oh < OH; ++oh) {
      const float* r0 = x + (2 * oh) * W;
      const float* r1 = r0 + W;
      for (int ow = 0; ow < OW; ++ow) {
        const int w = 2 * ow;
        float best = r0[w];
        int32_t at = 2 * oh * W + w;
        if (r0[w + 1] > best) best = r0[w + 1], at = 2 * oh * W + w + 1;
        if (r1[w] > best) best = r1[w], at = (2 * oh + 1) * W + w;
        if (r1[w + 1] > best) best = r1[w + 1], at = (2 * oh + 1) * W + w + 1;
        y[oh * OW + ow] = best;
        idx[oh * OW + ow] = at;
      }
    }
  }
}

STEPSCOPE_DISPATCH void MaxPool2dBackward(float* dinp, const float* dout, const int32_t* argmax, int B, int C, int H,
                       int W) {
  // out[oh,ow] = inp[argmax[oh,ow]]  =>  dinp[argmax[oh,ow]] += dout[oh,ow]
  const int OHW = (H / 2) * (W / 2);
  for (long plane = 0; plane < static_cast<long>(B) * C; ++plane) {
    float* dx = dinp + plane * H * W;
    const float* dy = dout + plane * OHW;
    const int32_t* idx = argmax + plane * OHW;
    for (int i = 0; i < OHW; ++i) dx[idx[i]] += dy[i];
  }
}

}  // namespace stepscope::nn
