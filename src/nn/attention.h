// Causal multi-head self-attention (scaled dot product), as a forward/backward pair over raw
// buffers. The projections in and out of it are Linear layers; this is the part between them.
#pragma once

namespace stepscope::nn {

// qkv (B,T,3C) holds per position [q | k | v], each C = NH * hs wide, head h in columns
// [h*hs, (h+1)*hs) of each. For every (b,h):
//   att[b,h] (T,T) = softmax(q k^T / sqrt(hs)) over keys j <= i (entries j > i are 0)
//   out[b,:,h*hs:(h+1)*hs] (T,hs) = att[b,h] @ v
// out is (B,T,C) and is overwritten; att (B,NH,T,T) is saved for the backward pass.
void AttentionForward(float* out, float* att, const float* qkv, int B, int T, int C, int NH);

// Backward of the lines above. Accumulates (+=) dqkv (B,T,3C) from dout (B,T,C).
// scratch must hold T*T floats; it is overwritten.
void AttentionBackward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                       const float* att, int B, int T, int C, int NH);

}  // namespace stepscope::nn
