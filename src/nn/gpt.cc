#include "nn/gpt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>

#include "nn/attention.h"
#include "nn/embedding.h"
#include "nn/gelu.h"
#include "nn/layernorm.h"
#include "nn/linear.h"
#include "nn/seq_cross_entropy.h"

namespace stepscope::nn {

namespace {

constexpr float kInitStd = 0.02f;

void Grow(std::vector<float>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

void Zero(std::vector<float>& v, size_t n) { std::fill(v.begin(), v.begin() + n, 0.0f); }

// Standard normal samples by Box-Muller over mt19937_64, whose output the C++ standard fixes, so
// that a seed gives the same parameters with every standard library.
class NormalSource {
 public:
  explicit NormalSource(uint64_t seed) : engine_(seed) {}
  float Next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    // u1 in (0, 1], u2 in [0, 1) from the top 53 bits
    const double u1 = (static_cast<double>(engine_() >> 11) + 1.0) * 0x1.0p-53;
    const double u2 = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * std::numbers::pi * u2;
    spare_ = static_cast<float>(r * std::sin(theta));
    has_spare_ = true;
    return static_cast<float>(r * std::cos(theta));
  }

 private:
  std::mt19937_64 engine_;
  bool has_spare_ = false;
  float spare_ = 0.0f;
};

}  // namespace

Result<std::unique_ptr<Gpt>> Gpt::Create(const ModelConfig& config) {
  STEPSCOPE_RETURN_IF_ERROR(ValidateGptConfig(config));
  return std::unique_ptr<Gpt>(new Gpt(GptShapeFrom(config), config.seed));
}

Result<std::unique_ptr<Model>> MakeGpt(const ModelConfig& config) {
  Result<std::unique_ptr<Gpt>> gpt = Gpt::Create(config);
  if (!gpt.ok()) return gpt.status();
  return std::unique_ptr<Model>(std::move(gpt).value());
}

Gpt::Gpt(const GptShape& shape, uint64_t seed)
    : shape_(shape), layout_(ComputeGptLayout(shape)), blocks_(shape.L) {
  params_.assign(layout_.total, 0.0f);
  grads_.assign(layout_.total, 0.0f);
  InitParams(seed);
}

void Gpt::InitParams(uint64_t seed) {
  NormalSource normal(seed);
  const size_t C = shape_.C;
  const size_t V = shape_.V;
  const float residual_std = kInitStd / std::sqrt(2.0f * shape_.L);
  auto fill_normal = [&](size_t offset, size_t count, float std) {
    for (size_t i = 0; i < count; ++i) params_[offset + i] = std * normal.Next();
  };
  auto fill_value = [&](size_t offset, size_t count, float value) {
    std::fill_n(params_.begin() + offset, count, value);
  };
  fill_normal(layout_.wte, V * C, kInitStd);
  fill_normal(layout_.wpe, static_cast<size_t>(shape_.T) * C, kInitStd);
  for (const GptBlockOffsets& b : layout_.blocks) {
    // biases stay 0 from construction
    fill_value(b.ln1w, C, 1.0f);
    fill_normal(b.qkvw, 3 * C * C, kInitStd);
    fill_normal(b.attprojw, C * C, residual_std);
    fill_value(b.ln2w, C, 1.0f);
    fill_normal(b.fcw, 4 * C * C, kInitStd);
    fill_normal(b.fcprojw, 4 * C * C, residual_std);
  }
  fill_value(layout_.lnfw, C, 1.0f);
  fill_normal(layout_.head, V * C, kInitStd);
}

std::string Gpt::Describe() const {
  char text[160];
  std::snprintf(text, sizeof(text), "gpt L=%d C=%d H=%d T=%d (%.1f M parameters)", shape_.L,
                shape_.C, shape_.NH, shape_.T, static_cast<double>(layout_.total) / 1e6);
  return text;
}

ModelStats Gpt::Stats() const { return ComputeGptStats(shape_); }

void Gpt::EnsureCapacity(int B, int T) {
  const size_t BT = static_cast<size_t>(B) * T;
  const size_t C = shape_.C;
  const size_t V = shape_.V;
  const size_t att = static_cast<size_t>(B) * shape_.NH * T * T;
  if (tokens_.size() < BT) {
    tokens_.resize(BT);
    targets_.resize(BT);
  }
  Grow(encoded_, BT * C);
  for (BlockActs& a : blocks_) {
    Grow(a.ln1, BT * C);
    Grow(a.ln1_mean, BT);
    Grow(a.ln1_rstd, BT);
    Grow(a.qkv, BT * 3 * C);
    Grow(a.att, att);
    Grow(a.atty, BT * C);
    Grow(a.residual2, BT * C);
    Grow(a.ln2, BT * C);
    Grow(a.ln2_mean, BT);
    Grow(a.ln2_rstd, BT);
    Grow(a.fch, BT * 4 * C);
    Grow(a.fch_gelu, BT * 4 * C);
    Grow(a.residual3, BT * C);
  }
  Grow(lnf_, BT * C);
  Grow(lnf_mean_, BT);
  Grow(lnf_rstd_, BT);
  Grow(probs_, BT * V);
  Grow(losses_, BT);
  Grow(proj_, BT * C);
  Grow(dres_, BT * C);
  Grow(dln_, BT * C);
  Grow(datty_, BT * C);
  Grow(dqkv_, BT * 3 * C);
  Grow(dfch_, BT * 4 * C);
  Grow(dfch_gelu_, BT * 4 * C);
  Grow(datt_, static_cast<size_t>(T) * T);
  Grow(dlogits_, BT * V);
  Grow(dlosses_, BT);
}

double Gpt::ForwardSum(const Batch& batch) {
  valid_ = false;
  const double kNaN = std::numeric_limits<double>::quiet_NaN();
  const int B = batch.size;
  if (B <= 0 || batch.tokens.empty() || batch.tokens.size() % B != 0 ||
      batch.targets.size() != batch.tokens.size()) {
    return kNaN;
  }
  const size_t t_long = batch.tokens.size() / B;
  if (t_long > static_cast<size_t>(shape_.T)) return kNaN;
  const int T = static_cast<int>(t_long);
  const int C = shape_.C;
  const int NH = shape_.NH;
  const int V = shape_.V;
  auto in_vocab = [V](int32_t x) { return x >= 0 && x < V; };
  if (!std::all_of(batch.tokens.begin(), batch.tokens.end(), in_vocab)) return kNaN;
  int64_t targeted = 0;  // targets that are not kPaddedTarget; any other value is malformed
  for (const int32_t t : batch.targets) {
    if (in_vocab(t)) {
      ++targeted;
    } else if (t != kPaddedTarget) {
      return kNaN;
    }
  }
  if (targeted == 0) return kNaN;
  EnsureCapacity(B, T);
  B_ = B;
  T_ = T;
  targeted_ = targeted;
  const int BT = B * T;
  std::copy(batch.tokens.begin(), batch.tokens.end(), tokens_.begin());
  std::copy(batch.targets.begin(), batch.targets.end(), targets_.begin());
  const float* p = params_.data();

  // encoded (B,T,C) = wte[tokens] + wpe
  EmbeddingForward(encoded_.data(), tokens_.data(), p + layout_.wte, p + layout_.wpe, B, T, C);
  const float* x = encoded_.data();  // residual stream entering the block, (B,T,C)
  for (int l = 0; l < shape_.L; ++l) {
    const GptBlockOffsets& o = layout_.blocks[l];
    BlockActs& a = blocks_[l];
    // ln1 (B,T,C) = layernorm(x)
    LayerNormForward(a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data(), x, p + o.ln1w, p + o.ln1b,
                     BT, C);
    // qkv (B,T,3C) = ln1 @ qkvw^T + qkvb
    LinearForward(a.qkv.data(), a.ln1.data(), p + o.qkvw, p + o.qkvb, BT, C, 3 * C);
    // atty (B,T,C) = causal attention(qkv)
    AttentionForward(a.atty.data(), a.att.data(), a.qkv.data(), B, T, C, NH);
    // residual2 (B,T,C) = x + atty @ attprojw^T + attprojb
    LinearForward(proj_.data(), a.atty.data(), p + o.attprojw, p + o.attprojb, BT, C, C);
    for (size_t i = 0; i < static_cast<size_t>(BT) * C; ++i) a.residual2[i] = x[i] + proj_[i];
    // ln2 (B,T,C) = layernorm(residual2)
    LayerNormForward(a.ln2.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.residual2.data(),
                     p + o.ln2w, p + o.ln2b, BT, C);
    // fch (B,T,4C) = ln2 @ fcw^T + fcb; fch_gelu = gelu(fch)
    LinearForward(a.fch.data(), a.ln2.data(), p + o.fcw, p + o.fcb, BT, C, 4 * C);
    GeluForward(a.fch_gelu.data(), a.fch.data(), static_cast<size_t>(BT) * 4 * C);
    // residual3 (B,T,C) = residual2 + fch_gelu @ fcprojw^T + fcprojb
    LinearForward(proj_.data(), a.fch_gelu.data(), p + o.fcprojw, p + o.fcprojb, BT, 4 * C, C);
    for (size_t i = 0; i < static_cast<size_t>(BT) * C; ++i) {
      a.residual3[i] = a.residual2[i] + proj_[i];
    }
    x = a.residual3.data();
  }
  // lnf (B,T,C) = layernorm(x)
  LayerNormForward(lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(), x, p + layout_.lnfw,
                   p + layout_.lnfb, BT, C);
  // logits (B,T,V) = lnf @ head^T   (no bias), then probs = softmax(logits) in place
  LinearForward(probs_.data(), lnf_.data(), p + layout_.head, nullptr, BT, C, V);
  // losses (B,T) = -log probs[targets]
  const double sum =
      SeqCrossEntropyForward(probs_.data(), losses_.data(), probs_.data(), targets_.data(), BT, V);
  valid_ = true;
  return sum;
}

float Gpt::Forward(const Batch& batch) {
  const double sum = ForwardSum(batch);
  if (!valid_) return static_cast<float>(sum);
  return static_cast<float>(sum / static_cast<double>(targeted_));
}

void Gpt::Backward(float loss_scale, const GradReadyFn& ready) {
  auto report = [&ready](size_t begin, size_t end) {
    if (ready) ready(begin, end - begin);
  };
  if (!valid_) {  // nothing to differentiate: report the slices unchanged
    report(layout_.head_begin, layout_.total);
    for (int l = shape_.L - 1; l >= 0; --l) report(layout_.blocks[l].begin, layout_.blocks[l].end);
    report(0, layout_.blocks.empty() ? layout_.head_begin : layout_.blocks[0].begin);
    return;
  }
  const int B = B_;
  const int T = T_;
  const int BT = B * T;
  const int C = shape_.C;
  const int NH = shape_.NH;
  const int V = shape_.V;
  const size_t BTC = static_cast<size_t>(BT) * C;
  const float* p = params_.data();
  float* g = grads_.data();

  // loss = loss_scale * mean(losses over the targeted positions)
  //   =>  dlosses = loss_scale / targeted there, 0 at a padded position
  const float per_target = loss_scale / static_cast<float>(targeted_);
  for (int n = 0; n < BT; ++n) dlosses_[n] = targets_[n] == kPaddedTarget ? 0.0f : per_target;
  // losses = -log softmax(logits)[targets]
  Zero(dlogits_, static_cast<size_t>(BT) * V);
  SeqCrossEntropyBackward(dlogits_.data(), probs_.data(), targets_.data(), dlosses_.data(), BT, V);
  // logits = lnf @ head^T
  Zero(dln_, BTC);
  LinearBackward(dln_.data(), g + layout_.head, nullptr, dlogits_.data(), lnf_.data(),
                 p + layout_.head, BT, C, V);
  // lnf = layernorm(x), x the last block's output
  const float* x_last = shape_.L > 0 ? blocks_.back().residual3.data() : encoded_.data();
  Zero(dres_, BTC);
  LayerNormBackward(dres_.data(), g + layout_.lnfw, g + layout_.lnfb, dln_.data(), x_last,
                    p + layout_.lnfw, lnf_mean_.data(), lnf_rstd_.data(), BT, C);
  report(layout_.head_begin, layout_.total);

  for (int l = shape_.L - 1; l >= 0; --l) {
    const GptBlockOffsets& o = layout_.blocks[l];
    BlockActs& a = blocks_[l];
    const float* x = l == 0 ? encoded_.data() : blocks_[l - 1].residual3.data();
    // dres_ holds d(residual3). residual3 = residual2 + fch_gelu @ fcprojw^T + fcprojb
    //   => d(residual2) = d(residual3) (kept in dres_), d(projection output) = d(residual3)
    Zero(dfch_gelu_, BTC * 4);
    LinearBackward(dfch_gelu_.data(), g + o.fcprojw, g + o.fcprojb, dres_.data(), a.fch_gelu.data(),
                   p + o.fcprojw, BT, 4 * C, C);
    // fch_gelu = gelu(fch)
    Zero(dfch_, BTC * 4);
    GeluBackward(dfch_.data(), a.fch.data(), dfch_gelu_.data(), BTC * 4);
    // fch = ln2 @ fcw^T + fcb
    Zero(dln_, BTC);
    LinearBackward(dln_.data(), g + o.fcw, g + o.fcb, dfch_.data(), a.ln2.data(), p + o.fcw, BT, C,
                   4 * C);
    // ln2 = layernorm(residual2)   (adds into d(residual2) = dres_)
    LayerNormBackward(dres_.data(), g + o.ln2w, g + o.ln2b, dln_.data(), a.residual2.data(),
                      p + o.ln2w, a.ln2_mean.data(), a.ln2_rstd.data(), BT, C);
    // residual2 = x + atty @ attprojw^T + attprojb  =>  d(x) = d(residual2) (kept in dres_)
    Zero(datty_, BTC);
    LinearBackward(datty_.data(), g + o.attprojw, g + o.attprojb, dres_.data(), a.atty.data(),
                   p + o.attprojw, BT, C, C);
    // atty = causal attention(qkv)
    Zero(dqkv_, BTC * 3);
    AttentionBackward(dqkv_.data(), datt_.data(), datty_.data(), a.qkv.data(), a.att.data(), B, T,
                      C, NH);
    // qkv = ln1 @ qkvw^T + qkvb
    Zero(dln_, BTC);
    LinearBackward(dln_.data(), g + o.qkvw, g + o.qkvb, dqkv_.data(), a.ln1.data(), p + o.qkvw, BT,
                   C, 3 * C);
    // ln1 = layernorm(x)   (adds into d(x) = dres_)
    LayerNormBackward(dres_.data(), g + o.ln1w, g + o.ln1b, dln_.data(), x, p + o.ln1w,
                      a.ln1_mean.data(), a.ln1_rstd.data(), BT, C);
    report(o.begin, o.end);
  }
  // encoded = wte[tokens] + wpe
  EmbeddingBackward(g + layout_.wte, g + layout_.wpe, dres_.data(), tokens_.data(), B, T, C);
  report(0, shape_.L > 0 ? layout_.blocks[0].begin : layout_.head_begin);
}

EvalResult Gpt::Evaluate(const Batch& batch) {
  EvalResult r;
  r.loss_sum = ForwardSum(batch);
  r.count = valid_ ? targeted_ : 0;
  return r;
}

std::span<const float> Gpt::position_losses() const {
  return {losses_.data(), valid_ ? static_cast<size_t>(B_) * T_ : 0};
}

std::span<const float> Gpt::probs() const {
  return {probs_.data(), valid_ ? static_cast<size_t>(B_) * T_ * shape_.V : 0};
}

}  // namespace stepscope::nn
