#include "nn/gpt_layout.h"

#include <string>

namespace stepscope::nn {

namespace {

Status FieldError(const std::string& field, int value, const std::string& rule) {
  return Status::Error("gpt: field '" + field + "' is " + std::to_string(value) + ", " + rule);
}

}  // namespace

Status ValidateGptConfig(const ModelConfig& config) {
  if (config.gpt_layers <= 0) {
    return FieldError("gpt_layers", config.gpt_layers, "expected at least 1 block");
  }
  if (config.gpt_width <= 0) {
    return FieldError("gpt_width", config.gpt_width, "expected a positive width (e.g. 128)");
  }
  if (config.gpt_heads <= 0) {
    return FieldError("gpt_heads", config.gpt_heads, "expected at least 1 head");
  }
  if (config.gpt_width % config.gpt_heads != 0) {
    return FieldError("gpt_heads", config.gpt_heads,
                      "which does not divide gpt_width " + std::to_string(config.gpt_width) +
                          " (choose heads so that width / heads is whole)");
  }
  if (config.gpt_context <= 0 || config.gpt_context > kGptMaxContext) {
    return FieldError("gpt_context", config.gpt_context,
                      "expected 1.." + std::to_string(kGptMaxContext));
  }
  return Status::Ok();
}

GptShape GptShapeFrom(const ModelConfig& config) {
  return GptShape{config.gpt_layers, config.gpt_width, config.gpt_heads, config.gpt_context,
                  kGptVocab};
}

GptLayout ComputeGptLayout(const GptShape& s) {
  const size_t C = s.C;
  GptLayout g;
  size_t at = 0;
  auto take = [&at](size_t n) {
    const size_t begin = at;
    at += n;
    return begin;
  };
  g.wte = take(static_cast<size_t>(s.V) * C);
  g.wpe = take(static_cast<size_t>(s.T) * C);
  g.blocks.resize(s.L);
  for (GptBlockOffsets& b : g.blocks) {
    b.begin = at;
    b.ln1w = take(C);
    b.ln1b = take(C);
    b.qkvw = take(3 * C * C);
    b.qkvb = take(3 * C);
    b.attprojw = take(C * C);
    b.attprojb = take(C);
    b.ln2w = take(C);
    b.ln2b = take(C);
    b.fcw = take(4 * C * C);
    b.fcb = take(4 * C);
    b.fcprojw = take(4 * C * C);
    b.fcprojb = take(C);
    b.end = at;
  }
  g.head_begin = at;
  g.lnfw = take(C);
  g.lnfb = take(C);
  g.head = take(static_cast<size_t>(s.V) * C);
  g.total = at;
  return g;
}

ModelStats ComputeGptStats(const GptShape& s) {
  const GptLayout g = ComputeGptLayout(s);
  const double L = s.L, C = s.C, T = s.T, NH = s.NH, V = s.V;
  ModelStats st;
  st.parameters = static_cast<int64_t>(g.total);
  st.gradient_bytes = st.parameters * 4;
  // 2 FLOPs per multiply-add, backward about twice forward: 6 per parameter per position, plus
  // attention scores and weighted sums (2 * 2*T*T*C forward per block, computed unmasked).
  st.flops_per_sample = 6.0 * st.parameters * T + 3.0 * L * 4.0 * T * T * C;
  // Saved per block: ln1, qkv (3C), attention output, residual after attention, ln2, fc pre- and
  // post-GELU (4C each), block output, two LayerNorm statistics pairs and the attention
  // probabilities (NH,T,T).
  // Plus embeddings output, final LayerNorm, probabilities (V) and losses per position.
  const double per_block = T * (16 * C + 4) + NH * T * T;
  const double rest = T * (C + C + 2 + V + 1);
  st.activation_bytes_per_sample = static_cast<int64_t>(4.0 * (L * per_block + rest));
  return st;
}

}  // namespace stepscope::nn
