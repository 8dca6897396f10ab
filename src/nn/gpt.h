// gpt: byte-level decoder-only transformer (token + position embedding, pre-LayerNorm blocks of
// causal multi-head self-attention and GELU MLP, final LayerNorm, untied LM head), trained with
// the mean next-byte cross-entropy over all B*T positions.
//
//   x = wte[tokens] + wpe[0..T)                                   (B,T,C)
//   for each block: x += attproj(attention(qkv(ln1(x))))
//                   x += fcproj(gelu(fc(ln2(x))))                 fc is C -> 4C -> C
//   logits = head(lnf(x))                                         (B,T,256)
//
// Initialisation (deterministic from config.seed): weights N(0, 0.02), the two residual
// projections of each block N(0, 0.02 / sqrt(2L)), biases 0, LayerNorm weight 1 and bias 0.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nn/flat_buffer.h"
#include "nn/gpt_layout.h"
#include "nn/model.h"

namespace stepscope::nn {

class Gpt : public Model {
 public:
  // Validates the gpt_* fields of `config` and initialises the parameters from config.seed.
  static Result<std::unique_ptr<Gpt>> Create(const ModelConfig& config);

  std::string Describe() const override;
  ModelStats Stats() const override;
  std::span<float> params() override { return params_; }
  std::span<float> grads() override { return grads_; }
  bool RelocateGrads(std::span<float> storage) override { return grads_.Relocate(storage); }

  // Batch: tokens and targets (B,t) bytes with B = batch.size and 1 <= t <= context; B may change
  // between calls (buffers grow to the largest B*t seen, then are reused). Returns the mean loss
  // over the targets that are not kPaddedTarget (a padded position is computed, and counts for
  // nothing). Returns NaN, and makes the next Backward add nothing, when the batch is malformed
  // or has no target.
  float Forward(const Batch& batch) override;
  // Backward of the last Forward. Reports ready slices in this order: [lnf + head], blocks L-1
  // down to 0, [wte + wpe].
  void Backward(float loss_scale, const GradReadyFn& ready) override;
  // Runs Forward (replacing the activations a pending Backward would use) and sums the losses.
  EvalResult Evaluate(const Batch& batch) override;

  // From the last Forward: per-position losses (B,t) and next-byte probabilities (B,t,256).
  std::span<const float> position_losses() const;
  std::span<const float> probs() const;
  const GptLayout& layout() const { return layout_; }

 private:
  struct BlockActs {
    std::vector<float> ln1, ln1_mean, ln1_rstd;  // (B,T,C), (B,T), (B,T)
    std::vector<float> qkv;                      // (B,T,3C)
    std::vector<float> att;                      // (B,NH,T,T)
    std::vector<float> atty;                     // (B,T,C) attention output before attproj
    std::vector<float> residual2;                // (B,T,C) x after the attention branch
    std::vector<float> ln2, ln2_mean, ln2_rstd;  // (B,T,C), (B,T), (B,T)
    std::vector<float> fch, fch_gelu;            // (B,T,4C) before and after GELU
    std::vector<float> residual3;                // (B,T,C) block output
  };

  Gpt(const GptShape& shape, uint64_t seed);
  void InitParams(uint64_t seed);
  void EnsureCapacity(int B, int T);
  // Forward over the validated batch; returns the summed loss, or NaN when malformed.
  double ForwardSum(const Batch& batch);

  GptShape shape_;
  GptLayout layout_;
  std::vector<float> params_;
  FlatBuffer grads_;

  // Activations of the last Forward (B_ sequences of T_ positions); valid_ when Backward may run.
  int B_ = 0;
  int T_ = 0;
  int64_t targeted_ = 0;  // positions whose target is not kPaddedTarget
  bool valid_ = false;
  std::vector<int32_t> tokens_, targets_;  // (B,T)
  std::vector<float> encoded_;             // (B,T,C)
  std::vector<BlockActs> blocks_;
  std::vector<float> lnf_, lnf_mean_, lnf_rstd_;  // (B,T,C), (B,T), (B,T)
  std::vector<float> probs_;                      // (B,T,V) logits, then softmax in place
  std::vector<float> losses_;                     // (B,T)

  // Scratch for forward and backward, reused every step.
  std::vector<float> proj_;       // (B,T,C) output of a residual projection
  std::vector<float> dres_;       // (B,T,C) gradient of the residual stream
  std::vector<float> dln_;        // (B,T,C) gradient of a LayerNorm output
  std::vector<float> datty_;      // (B,T,C)
  std::vector<float> dqkv_;       // (B,T,3C)
  std::vector<float> dfch_;       // (B,T,4C)
  std::vector<float> dfch_gelu_;  // (B,T,4C)
  std::vector<float> datt_;       // (T,T)
  std::vector<float> dlogits_;    // (B,T,V)
  std::vector<float> dlosses_;    // (B,T)
};

Result<std::unique_ptr<Model>> MakeGpt(const ModelConfig& config);

}  // namespace stepscope::nn
