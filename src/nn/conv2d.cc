#include "nn/conv2d.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>

#include "core/cpu_dispatch.h"

namespace stepscope::nn {
namespace {

// col (C*K*K, OH*OW): col[(c,kh,kw), (oh,ow)] = img[c, oh - pad + kh, ow - pad + kw] or 0.
STEPSCOPE_DISPATCH void Im2Col(float* col, const float* img, int C, int H, int W, int K, int pad) {
  const int OH = ConvOutSize(H, K, pad), OW = ConvOutSize(W, K, pad);
  for (int c = 0; c < C; ++c) {
    for (int kh = 0; kh < K; ++kh) {
      for (int kw = 0; kw < K; ++kw) {
        float* row = col + static_cast<long>((c * K + kh) * K + kw) * OH * OW;
        const int shift = kw - pad;  // iw = ow + shift
        const int ow_lo = std::max(0, -shift), ow_hi = std::min(OW, W - shift);
        for (int oh = 0; oh < OH; ++oh) {
          float* dst = row + oh * OW;
          const int ih = oh - pad + kh;
          if (ih < 0 || ih >= H || ow_lo >= ow_hi) {
            std::memset(dst, 0, sizeof(float) * OW);
            continue;
          }
          const float* src = img + (static_cast<long>(c) * H + ih) * W;
          for (int ow = 0; ow < ow_lo; ++ow) dst[ow] = 0.0f;
          std::memcpy(dst + ow_lo, src + ow_lo + shift, sizeof(float) * (ow_hi - ow_lo));
          for (int ow = ow_hi; ow < OW; ++ow) dst[ow] = 0.0f;
        }
      }
    }
  }
}

// Backward of Im2Col: img[c, ih, iw] += col[(c,kh,kw), (oh,ow)] for every copy made above.
STEPSCOPE_DISPATCH void Col2ImAdd(float* img, const float* col, int C, int H, int W, int K, int pad) {
  const int OH = ConvOutSize(H, K, pad), OW = ConvOutSize(W, K, pad);
  for (int c = 0; c < C; ++c) {
    for (int kh = 0; kh < K; ++kh) {
      for (int kw = 0; kw < K; ++kw) {
        const float* row = col + static_cast<long>((c * K + kh) * K + kw) * OH * OW;
        const int shift = kw - pad;
        const int ow_lo = std::max(0, -shift), ow_hi = std::min(OW, W - shift);
        for (int oh = 0; oh < OH; ++oh) {
          const int ih = oh - pad + kh;
          if (ih < 0 || ih >= H) continue;
          const float* src = row + oh * OW;
          float* dst = img + (static_cast<long>(c) * H + ih) * W + shift;
          for (int ow = ow_lo; ow < ow_hi; ++ow) dst[ow] += src[ow];
        }
      }
    }
  }
}

}  // namespace

void Conv2dForward(float* out, float* col, const float* inp, const float* weight, const float* bias,
                   int B, int C, int H, int W, int OC, int K, int pad) {
  const int OH = ConvOutSize(H, K, pad), OW = ConvOutSize(W, K, pad);
  const int CKK = C * K * K, OHW = OH * OW;
  for (int b = 0; b < B; ++b) {
    float* col_b = col + static_cast<long>(b) * CKK * OHW;  // col_b is (CKK, OHW)
    float* out_b = out + static_cast<long>(b) * OC * OHW;   // out_b is (OC, OHW)
    Im2Col(col_b, inp + static_cast<long>(b) * C * H * W, C, H, W, K, pad);
    for (int o = 0; o < OC; ++o) {
      const float v = bias ? bias[o] : 0.0f;
      std::fill(out_b + static_cast<long>(o) * OHW, out_b + static_cast<long>(o + 1) * OHW, v);
    }
    // out_b = weight (OC, CKK) @ col_b (CKK, OHW) + bias
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, OC, OHW, CKK, 1.0f, weight, CKK, col_b,
                OHW, 1.0f, out_b, OHW);
  }
}

void Conv2dBackward(float* dinp, float* dcol, float* dweight, float* dbias, const float* dout,
                    const float* col, const float* weight, int B, int C, int H, int W, int OC,
                    int K, int pad) {
  const int OH = ConvOutSize(H, K, pad), OW = ConvOutSize(W, K, pad);
  const int CKK = C * K * K, OHW = OH * OW;
  for (int b = 0; b < B; ++b) {
    const float* col_b = col + static_cast<long>(b) * CKK * OHW;
    const float* dout_b = dout + static_cast<long>(b) * OC * OHW;
    // out_b = weight @ col_b + bias  =>
    //   dweight += dout_b (OC,OHW) @ col_b^T (OHW,CKK)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, OC, CKK, OHW, 1.0f, dout_b, OHW, col_b,
                OHW, 1.0f, dweight, CKK);
    //   dbias[o] += sum over (oh,ow) of dout_b[o]
    if (dbias) {
      for (int o = 0; o < OC; ++o) {
        const float* r = dout_b + static_cast<long>(o) * OHW;
        float s = 0.0f;
        for (int i = 0; i < OHW; ++i) s += r[i];
        dbias[o] += s;
      }
    }
    //   dcol_b = weight^T (CKK,OC) @ dout_b (OC,OHW), then folded back onto dinp
    if (dinp) {
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, CKK, OHW, OC, 1.0f, weight, CKK, dout_b,
                  OHW, 0.0f, dcol, OHW);
      Col2ImAdd(dinp + static_cast<long>(b) * C * H * W, dcol, C, H, W, K, pad);
    }
  }
}

}  // namespace stepscope::nn
