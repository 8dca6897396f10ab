#include "nn/gpt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "nn/gpt_testing.h"

namespace stepscope::nn {
namespace {

using gpt_testing::MaxRelativeError;
using testing::RandomVector;

ModelConfig TinyConfig(int layers = 2) {
  ModelConfig c;
  c.kind = ModelKind::kGpt;
  c.gpt_layers = layers;
  c.gpt_width = 8;
  c.gpt_heads = 2;
  c.gpt_context = 4;
  c.seed = 7;
  return c;
}

std::unique_ptr<Gpt> MakeOrDie(const ModelConfig& config) {
  Result<std::unique_ptr<Gpt>> gpt = Gpt::Create(config);
  EXPECT_TRUE(gpt.ok()) << gpt.status().message();
  return gpt.ok() ? std::move(gpt).value() : nullptr;
}

Batch RandomTextBatch(int B, int T, uint64_t seed) {
  std::mt19937_64 engine(seed);
  Batch batch;
  batch.size = B;
  for (int i = 0; i < B * T; ++i) {
    batch.tokens.push_back(static_cast<int32_t>(engine() % 256));
    batch.targets.push_back(static_cast<int32_t>(engine() % 256));
  }
  return batch;
}

void ZeroGradsOf(Model& model) { std::ranges::fill(model.grads(), 0.0f); }

// 12 L C^2 + 13 L C (blocks) + 2 V C (wte, head) + T C (wpe) + 2 C (final LayerNorm).
int64_t ExpectedParameters(int64_t L, int64_t C, int64_t T) {
  return 12 * L * C * C + 13 * L * C + 2 * 256 * C + T * C + 2 * C;
}

TEST(GptTest, RejectsBadConfigNamingTheField) {
  struct Case {
    void (*edit)(ModelConfig&);
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](ModelConfig& c) { c.gpt_layers = 0; }, "gpt_layers"},
      {[](ModelConfig& c) { c.gpt_width = -8; }, "gpt_width"},
      {[](ModelConfig& c) { c.gpt_heads = 0; }, "gpt_heads"},
      {[](ModelConfig& c) { c.gpt_heads = 3; }, "gpt_heads"},
      {[](ModelConfig& c) { c.gpt_context = 0; }, "gpt_context"},
      {[](ModelConfig& c) { c.gpt_context = 4097; }, "gpt_context"},
  };
  for (const Case& k : cases) {
    ModelConfig config = TinyConfig();
    k.edit(config);
    Result<std::unique_ptr<Model>> model = MakeGpt(config);
    ASSERT_FALSE(model.ok()) << k.field;
    EXPECT_NE(model.status().message().find(k.field), std::string::npos)
        << model.status().message();
  }
}

TEST(GptTest, ParameterCountsAndDescription) {
  ModelConfig config = TinyConfig();
  config.gpt_layers = 2;
  config.gpt_width = 128;
  config.gpt_heads = 4;
  config.gpt_context = 64;
  std::unique_ptr<Gpt> gpt = MakeOrDie(config);
  ASSERT_NE(gpt, nullptr);
  const ModelStats stats = gpt->Stats();
  EXPECT_EQ(stats.parameters, ExpectedParameters(2, 128, 64));
  EXPECT_EQ(static_cast<int64_t>(gpt->params().size()), stats.parameters);
  EXPECT_EQ(gpt->grads().size(), gpt->params().size());
  EXPECT_EQ(stats.gradient_bytes, 4 * stats.parameters);
  EXPECT_GT(stats.flops_per_sample, 6.0 * stats.parameters * 64);
  EXPECT_GT(stats.activation_bytes_per_sample, 0);
  EXPECT_EQ(gpt->Describe(), "gpt L=2 C=128 H=4 T=64 (0.5 M parameters)");
  // A GPT-2-small-like width: L=8, C=768 is about 57 M parameters.
  const ModelStats big = ComputeGptStats(GptShape{8, 768, 12, 64, 256});
  EXPECT_EQ(big.parameters, ExpectedParameters(8, 768, 64));
  EXPECT_GT(big.parameters, 50'000'000);
}

TEST(GptTest, LargeModelIsConstructible) {
  ModelConfig config = TinyConfig();
  config.gpt_layers = 8;
  config.gpt_width = 768;
  config.gpt_heads = 12;
  config.gpt_context = 64;
  std::unique_ptr<Gpt> gpt = MakeOrDie(config);
  ASSERT_NE(gpt, nullptr);
  EXPECT_GT(gpt->params().size(), 50'000'000u);
}

TEST(GptTest, InitIsDeterministicFromSeed) {
  std::unique_ptr<Gpt> a = MakeOrDie(TinyConfig());
  std::unique_ptr<Gpt> b = MakeOrDie(TinyConfig());
  ModelConfig other = TinyConfig();
  other.seed = 8;
  std::unique_ptr<Gpt> c = MakeOrDie(other);
  EXPECT_TRUE(std::ranges::equal(a->params(), b->params()));
  EXPECT_FALSE(std::ranges::equal(a->params(), c->params()));
}

TEST(GptTest, FreshModelPredictsNearlyUniformBytes) {
  std::unique_ptr<Gpt> gpt = MakeOrDie(TinyConfig());
  const float loss = gpt->Forward(RandomTextBatch(2, 4, 1));
  EXPECT_NEAR(loss, std::log(256.0), 0.1);
}

TEST(GptTest, WholeModelGradientMatchesFiniteDifferences) {
  std::unique_ptr<Gpt> gpt = MakeOrDie(TinyConfig(2));
  // Larger weights than the init so that every gradient is well above float rounding.
  const std::vector<float> init = RandomVector(gpt->params().size(), 21, -0.5f, 0.5f);
  const GptLayout& g = gpt->layout();
  std::ranges::copy(init, gpt->params().begin());
  for (const GptBlockOffsets& b : g.blocks) {  // LayerNorm weights near 1
    for (size_t c = 0; c < 8; ++c) {
      gpt->params()[b.ln1w + c] += 1.0f;
      gpt->params()[b.ln2w + c] += 1.0f;
    }
  }
  const Batch batch = RandomTextBatch(2, 4, 2);
  ZeroGradsOf(*gpt);
  gpt->Forward(batch);
  gpt->Backward(1.0f, nullptr);
  const std::vector<float> analytic(gpt->grads().begin(), gpt->grads().end());
  auto objective = [&] { return static_cast<double>(gpt->Evaluate(batch).loss_sum) / 8.0; };
  // A random subset, plus a few indices from every tensor of every group.
  std::mt19937_64 engine(3);
  std::vector<size_t> indices;
  for (int i = 0; i < 150; ++i) indices.push_back(engine() % g.total);
  const std::vector<size_t> starts = {g.wte + 8 * batch.tokens[0], g.wpe, g.lnfw, g.lnfb,
                                      g.head + 8 * batch.targets[0]};
  for (size_t s : starts) indices.push_back(s);
  for (const GptBlockOffsets& b : g.blocks) {
    for (size_t s : {b.ln1w, b.ln1b, b.qkvw, b.qkvb, b.attprojw, b.attprojb, b.ln2w, b.ln2b, b.fcw,
                     b.fcb, b.fcprojw, b.fcprojb}) {
      indices.push_back(s);
      indices.push_back(s + 3);
    }
  }
  const double err =
      MaxRelativeError(objective, gpt->params().data(), analytic.data(), indices, 1e-2f, 1e-2);
  std::printf("gpt gradcheck max rel err %g\n", err);
  EXPECT_LT(err, 5e-3);
}

TEST(GptTest, ReadySlicesTileTheBufferInDecreasingOrder) {
  std::unique_ptr<Gpt> gpt = MakeOrDie(TinyConfig(3));
  gpt->Forward(RandomTextBatch(2, 4, 4));
  std::vector<std::pair<size_t, size_t>> slices;
  std::vector<float> snapshot;
  bool final_when_reported = true;
  ZeroGradsOf(*gpt);
  gpt->Backward(1.0f, [&](size_t offset, size_t count) { slices.emplace_back(offset, count); });
  ASSERT_EQ(slices.size(), 3u + 2u);  // head group, 3 blocks, embeddings
  size_t end = gpt->params().size();
  for (const auto& [offset, count] : slices) {
    EXPECT_GT(count, 0u);
    EXPECT_EQ(offset + count, end);
    end = offset;
  }
  EXPECT_EQ(end, 0u);

  // A slice's gradient does not change after it is reported.
  std::vector<std::vector<float>> at_report;
  ZeroGradsOf(*gpt);
  gpt->Backward(1.0f, [&](size_t offset, size_t count) {
    at_report.emplace_back(gpt->grads().begin() + offset, gpt->grads().begin() + offset + count);
  });
  for (size_t i = 0; i < slices.size(); ++i) {
    const auto [offset, count] = slices[i];
    final_when_reported &=
        std::equal(at_report[i].begin(), at_report[i].end(), gpt->grads().begin() + offset);
  }
  EXPECT_TRUE(final_when_reported);
}

TEST(GptTest, ChangingATokenLeavesEarlierPositionsUnchanged) {
  ModelConfig config = TinyConfig(2);
  config.gpt_width = 16;
  config.gpt_context = 8;
  std::unique_ptr<Gpt> gpt = MakeOrDie(config);
  Batch batch = RandomTextBatch(1, 8, 5);
  gpt->Forward(batch);
  const std::vector<float> losses(gpt->position_losses().begin(), gpt->position_losses().end());
  const std::vector<float> probs(gpt->probs().begin(), gpt->probs().end());
  const int t = 5;
  batch.tokens[t] = (batch.tokens[t] + 1) % 256;
  gpt->Forward(batch);
  for (int i = 0; i < 8; ++i) {
    const bool same = std::equal(probs.begin() + i * 256, probs.begin() + (i + 1) * 256,
                                 gpt->probs().begin() + i * 256);
    if (i < t) {
      EXPECT_TRUE(same) << "position " << i;
      EXPECT_EQ(losses[i], gpt->position_losses()[i]) << "position " << i;
    } else if (i == t) {
      EXPECT_FALSE(same) << "position " << i;
    }
  }
}

TEST(GptTest, TwoHalfBackwardsEqualOneFull) {
  std::unique_ptr<Gpt> gpt = MakeOrDie(TinyConfig(2));
  gpt->Forward(RandomTextBatch(2, 4, 6));
  ZeroGradsOf(*gpt);
  gpt->Backward(1.0f, nullptr);
  const std::vector<float> full(gpt->grads().begin(), gpt->grads().end());
  ZeroGradsOf(*gpt);
  gpt->Backward(0.5f, nullptr);
  gpt->Backward(0.5f, nullptr);
  for (size_t i = 0; i < full.size(); ++i) {
    ASSERT_NEAR(gpt->grads()[i], full[i], 1e-6f * (1.0f + std::abs(full[i]))) << i;
  }
}

TEST(GptTest, EvaluateSumsWhatForwardAverages) {
  std::unique_ptr<Gpt> gpt = MakeOrDie(TinyConfig(1));
  const Batch batch = RandomTextBatch(3, 4, 7);
  const float mean = gpt->Forward(batch);
  const EvalResult r = gpt->Evaluate(batch);
  EXPECT_EQ(r.count, 12);
  EXPECT_NEAR(r.loss_sum / r.count, mean, 1e-5);
}

TEST(GptTest, BatchSizeAndLengthMayVary) {
  std::unique_ptr<Gpt> gpt = MakeOrDie(TinyConfig(1));
  const Batch small = RandomTextBatch(2, 4, 8);
  const float first = gpt->Forward(small);
  gpt->Forward(RandomTextBatch(5, 4, 9));
  EXPECT_EQ(gpt->Forward(small), first);
  // a shorter sequence is a prefix of the context: same per-position losses as the full one
  const std::vector<float> full(gpt->position_losses().begin(), gpt->position_losses().end());
  Batch prefix;
  prefix.size = 2;
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < 3; ++t) {
      prefix.tokens.push_back(small.tokens[b * 4 + t]);
      prefix.targets.push_back(small.targets[b * 4 + t]);
    }
  }
  gpt->Forward(prefix);
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < 3; ++t) {
      EXPECT_NEAR(gpt->position_losses()[b * 3 + t], full[b * 4 + t], 1e-5);
    }
  }
}

TEST(GptTest, PaddedPositionsChangeNeitherLossNorGradients) {
  // One example of 3 positions padded to 4: the loss (a mean over targeted positions) and every
  // gradient equal those of the same example cut to 3; Evaluate counts the 3.
  std::unique_ptr<Gpt> gpt = MakeOrDie(TinyConfig(2));
  Batch padded = RandomTextBatch(1, 4, 21);
  padded.targets[3] = kPaddedTarget;
  Batch cut;
  cut.size = 1;
  cut.tokens.assign(padded.tokens.begin(), padded.tokens.begin() + 3);
  cut.targets.assign(padded.targets.begin(), padded.targets.begin() + 3);
  const float loss_cut = gpt->Forward(cut);
  ZeroGradsOf(*gpt);
  gpt->Backward(1.0f, nullptr);
  const std::vector<float> grads_cut(gpt->grads().begin(), gpt->grads().end());
  const float loss_padded = gpt->Forward(padded);
  EXPECT_NEAR(loss_padded, loss_cut, 1e-6f);
  ZeroGradsOf(*gpt);
  gpt->Backward(1.0f, nullptr);
  for (size_t i = 0; i < grads_cut.size(); ++i) {
    ASSERT_NEAR(gpt->grads()[i], grads_cut[i], 1e-6f * (1.0f + std::abs(grads_cut[i]))) << i;
  }
  const EvalResult r = gpt->Evaluate(padded);
  EXPECT_EQ(r.count, 3);
  EXPECT_NEAR(r.loss_sum / r.count, loss_cut, 1e-5);
  // Rows of different lengths: the mean weighs every targeted position alike.
  Batch two = RandomTextBatch(2, 4, 22);
  two.targets[2] = two.targets[3] = kPaddedTarget;  // row 0 has 2 targets, row 1 has 4
  const float mean = gpt->Forward(two);
  const std::vector<float> losses(gpt->position_losses().begin(), gpt->position_losses().end());
  EXPECT_EQ(losses[2], 0.0f);
  double sum = 0;
  for (float l : losses) sum += l;
  EXPECT_NEAR(mean, sum / 6, 1e-5);
  // A batch with no target at all is malformed.
  Batch none = RandomTextBatch(1, 4, 23);
  std::ranges::fill(none.targets, kPaddedTarget);
  EXPECT_TRUE(std::isnan(gpt->Forward(none)));
}

TEST(GptTest, MalformedBatchGivesNaNAndNoGradient) {
  std::unique_ptr<Gpt> gpt = MakeOrDie(TinyConfig(1));
  Batch too_long = RandomTextBatch(1, 5, 10);  // context is 4
  EXPECT_TRUE(std::isnan(gpt->Forward(too_long)));
  Batch bad_byte = RandomTextBatch(1, 4, 11);
  bad_byte.tokens[2] = 300;
  EXPECT_TRUE(std::isnan(gpt->Forward(bad_byte)));
  ZeroGradsOf(*gpt);
  size_t reported = 0;
  gpt->Backward(1.0f, [&](size_t, size_t count) { reported += count; });
  EXPECT_EQ(reported, gpt->grads().size());
  EXPECT_TRUE(std::ranges::all_of(gpt->grads(), [](float g) { return g == 0.0f; }));
}

TEST(GptTest, LearnsARepeatingPatternWithPlainGradientSteps) {
  ModelConfig config;
  config.kind = ModelKind::kGpt;
  config.gpt_layers = 1;
  config.gpt_width = 32;
  config.gpt_heads = 2;
  config.gpt_context = 16;
  config.seed = 1;
  std::unique_ptr<Gpt> gpt = MakeOrDie(config);
  const std::string pattern = "stepscope! ";
  Batch batch;
  batch.size = 4;
  for (int b = 0; b < 4; ++b) {
    for (int t = 0; t < 16; ++t) {
      batch.tokens.push_back(pattern[(b + t) % pattern.size()]);
      batch.targets.push_back(pattern[(b + t + 1) % pattern.size()]);
    }
  }
  const float lr = 0.5f;
  float first = 0.0f, last = 0.0f;
  for (int step = 0; step < 40; ++step) {
    ZeroGradsOf(*gpt);
    last = gpt->Forward(batch);
    if (step == 0) first = last;
    gpt->Backward(1.0f, nullptr);
    for (size_t i = 0; i < gpt->params().size(); ++i) gpt->params()[i] -= lr * gpt->grads()[i];
  }
  EXPECT_NEAR(first, std::log(256.0), 0.1);
  EXPECT_LT(last, 0.25 * std::log(256.0));
}

}  // namespace
}  // namespace stepscope::nn
