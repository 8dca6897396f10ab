#include "nn/linear.h"

#include <cblas.h>

namespace stepscope::nn {

void LinearForward(float* out, const float* inp, const float* weight, const float* bias, int B,
                   int C, int OC) {
  // out = bias (broadcast over rows), then out += inp @ weight^T
  for (int b = 0; b < B; ++b) {
    float* row = out + static_cast<long>(b) * OC;
    for (int o = 0; o < OC; ++o) row[o] = bias ? bias[o] : 0.0f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, OC, C, 1.0f, inp, C, weight, C, 1.0f, out,
              OC);
}

void LinearBackwardParams(float* dweight, float* dbias, const float* dout, const float* inp, int B,
                          int C, int OC) {
  // out = inp @ weight^T + bias  =>
  //   dweight += dout^T @ inp      (OC,B)x(B,C)
  //   dbias += sum_b dout
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, B, 1.0f, dout, OC, inp, C, 1.0f,
              dweight, C);
  if (dbias) {
    for (int b = 0; b < B; ++b) {
      const float* row = dout + static_cast<long>(b) * OC;
      for (int o = 0; o < OC; ++o) dbias[o] += row[o];
    }
  }
}

void LinearBackwardInput(float* dinp, const float* dout, const float* weight, int B, int C,
                         int OC) {
  // out = inp @ weight^T + bias  =>  dinp += dout @ weight   (B,OC)x(OC,C)
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, C, OC, 1.0f, dout, OC, weight, C, 1.0f,
              dinp, C);
}

void LinearBackward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                    const float* weight, int B, int C, int OC) {
  if (dinp) LinearBackwardInput(dinp, dout, weight, B, C, OC);
  LinearBackwardParams(dweight, dbias, dout, inp, B, C, OC);
}

}  // namespace stepscope::nn
