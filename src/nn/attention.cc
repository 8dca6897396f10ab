#include "nn/attention.h"

#include <cblas.h>

#include <cmath>
#include <cstddef>

#include "core/cpu_dispatch.h"

namespace stepscope::nn {

STEPSCOPE_DISPATCH void AttentionForward(float* out, float* att, const float* qkv, int B, int T, int C, int NH) {
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      // q, k, v are (T,hs) views with row stride 3C; a is (T,T); o is (T,hs) with row stride C
      const float* q = qkv + static_cast<size_t>(b) * T * 3 * C + static_cast<size_t>(h) * hs;
      const float* k = q + C;
      const float* v = q + 2 * C;
      float* a = att + (static_cast<size_t>(b) * NH + h) * T * T;
      float* o = out + static_cast<size_t>(b) * T * C + static_cast<size_t>(h) * hs;
      // a = scale * q @ k^T   (the upper triangle is computed, then masked below)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, 3 * C, k, 3 * C,
                  0.0f, a, T);
      // a[i,:] = softmax over j <= i of a[i,j]; a[i,j] = 0 for j > i (causal mask)
      for (int i = 0; i < T; ++i) {
        float* row = a + static_cast<size_t>(i) * T;
        float max = row[0];
        for (int j = 1; j <= i; ++j) max = row[j] > max ? row[j] : max;
        float sum = 0.0f;
        for (int j = 0; j <= i; ++j) {
          row[j] = std::exp(row[j] - max);
          sum += row[j];
        }
        const float inv = 1.0f / sum;
        for (int j = 0; j <= i; ++j) row[j] *= inv;
        for (int j = i + 1; j < T; ++j) row[j] = 0.0f;
      }
      // o = a @ v
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, v, 3 * C, 0.0f,
                  o, C);
    }
  }
}

STEPSCOPE_DISPATCH void AttentionBackward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                       const float* att, int B, int T, int C, int NH) {
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  float* da = scratch;  // (T,T): first d(att), then d(pre-softmax scores)
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      const size_t head = static_cast<size_t>(b) * T * 3 * C + static_cast<size_t>(h) * hs;
      const float* q = qkv + head;
      const float* k = q + C;
      const float* v = q + 2 * C;
      float* dq = dqkv + head;
      float* dk = dq + C;
      float* dv = dq + 2 * C;
      const float* a = att + (static_cast<size_t>(b) * NH + h) * T * T;
      const float* dout_h = dout + static_cast<size_t>(b) * T * C + static_cast<size_t>(h) * hs;
      // o = a @ v  =>  da = dout_h @ v^T, dv += a^T @ dout_h
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, dout_h, C, v, 3 * C,
                  0.0f, da, T);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, dout_h, C, 1.0f,
                  dv, 3 * C);
      // a[i,:] = softmax(s[i,:]) over j <= i  =>  ds[i,j] = a[i,j] (da[i,j] - sum_k a[i,k] da[i,k])
      // s = scale * q @ k^T, so the scale is folded into ds here.
      for (int i = 0; i < T; ++i) {
        const float* arow = a + static_cast<size_t>(i) * T;
        float* drow = da + static_cast<size_t>(i) * T;
        float dot = 0.0f;
        for (int j = 0; j <= i; ++j) dot += arow[j] * drow[j];
        for (int j = 0; j <= i; ++j) drow[j] = scale * arow[j] * (drow[j] - dot);
        for (int j = i + 1; j < T; ++j) drow[j] = 0.0f;
      }
      // s = scale * q @ k^T  =>  dq += ds @ k, dk += ds^T @ q   (scale already in ds)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, da, T, k, 3 * C, 1.0f,
                  dq, 3 * C);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, da, T, q, 3 * C, 1.0f,
                  dk, 3 * C);
    }
  }
}

}  // namespace stepscope::nn
