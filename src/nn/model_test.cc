// Whole-model checks for mlp and cnn: gradients, bucket slices, accumulation, batch equivalence.
#include "nn/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nn/grad_check_testing.h"
#include "nn/optimizer.h"

namespace stepscope::nn {

// Readable test names for parameterised model configs.
void PrintTo(const ModelConfig& c, std::ostream* os);

namespace {

Batch MakeImageBatch(int B, uint64_t seed) {
  Batch batch;
  batch.size = B;
  batch.inputs = testing::RandomVector(static_cast<size_t>(B) * 784, seed);
  std::mt19937_64 rng(seed + 1000);
  for (int b = 0; b < B; ++b) batch.targets.push_back(static_cast<int32_t>(rng() % 10));
  return batch;
}

Batch Slice(const Batch& batch, int begin, int end) {
  Batch s;
  s.size = end - begin;
  s.inputs.assign(batch.inputs.begin() + begin * 784, batch.inputs.begin() + end * 784);
  s.targets.assign(batch.targets.begin() + begin, batch.targets.begin() + end);
  return s;
}

std::unique_ptr<Model> Make(const ModelConfig& config) {
  auto model = MakeModel(config);
  EXPECT_TRUE(model.ok()) << model.status().message();
  return std::move(model).value();
}

ModelConfig Mlp(std::vector<int> hidden) {
  ModelConfig c;
  c.kind = ModelKind::kMlp;
  c.hidden = std::move(hidden);
  return c;
}

ModelConfig Cnn(int channels) {
  ModelConfig c;
  c.kind = ModelKind::kCnn;
  c.cnn_channels = channels;
  return c;
}

class ModelTest : public ::testing::TestWithParam<ModelConfig> {};

TEST_P(ModelTest, GradientMatchesFiniteDifferences) {
  auto model = Make(GetParam());
  const Batch batch = MakeImageBatch(3, 11);
  model->ZeroGrads();
  const float loss = model->Forward(batch);
  EXPECT_NEAR(loss, std::log(10.0), 1.5);  // near chance at initialisation
  model->Backward(1.0f, nullptr);
  const std::span<float> g = model->grads();
  const std::vector<float> analytic(g.begin(), g.end());
  auto mean_loss = [&] {
    const EvalResult r = model->Evaluate(batch);
    return r.loss_sum / static_cast<double>(r.count);
  };
  testing::GradCheckOptions opt;
  opt.eps = 1e-2f;
  opt.max_checks = 300;
  opt.rel_tol = 3e-2;
  opt.abs_tol = 2e-4;
  opt.max_outliers = 6;
  testing::ExpectGradientMatches(model->Describe(), model->params(), analytic, mean_loss, opt);
}

TEST_P(ModelTest, ReadySlicesTileTheGradientInReverseOrder) {
  auto model = Make(GetParam());
  const Batch batch = MakeImageBatch(4, 12);
  for (int round = 0; round < 2; ++round) {
    std::vector<std::pair<size_t, size_t>> slices;
    model->Forward(batch);
    model->Backward(1.0f, [&](size_t offset, size_t count) { slices.emplace_back(offset, count); });
    ASSERT_GE(slices.size(), 2u);
    size_t end = model->params().size();
    for (const auto& [offset, count] : slices) {
      EXPECT_GT(count, 0u);
      EXPECT_EQ(offset + count, end) << "slices must be contiguous, offsets decreasing";
      end = offset;
    }
    EXPECT_EQ(end, 0u);
  }
}

TEST_P(ModelTest, TwoHalfScaledBackwardsEqualOneFull) {
  auto model = Make(GetParam());
  const Batch batch = MakeImageBatch(5, 13);
  model->ZeroGrads();
  model->Forward(batch);
  model->Backward(1.0f, nullptr);
  const std::vector<float> once(model->grads().begin(), model->grads().end());
  model->ZeroGrads();
  model->Forward(batch);
  model->Backward(0.5f, nullptr);
  model->Forward(batch);
  model->Backward(0.5f, nullptr);
  const std::span<float> twice = model->grads();
  for (size_t i = 0; i < once.size(); ++i) {
    ASSERT_NEAR(twice[i], once[i], 1e-6 + 1e-4 * std::fabs(once[i])) << "entry " << i;
  }
}

TEST_P(ModelTest, BatchGradientIsTheMeanOfItsHalves) {
  auto model = Make(GetParam());
  const Batch batch = MakeImageBatch(8, 14);
  model->ZeroGrads();
  model->Forward(batch);
  model->Backward(1.0f, nullptr);
  const std::vector<float> full(model->grads().begin(), model->grads().end());
  model->ZeroGrads();
  // larger batch first, then smaller: buffers grow once and are reused
  const float l1 = model->Forward(Slice(batch, 0, 4));
  model->Backward(0.5f, nullptr);
  const float l2 = model->Forward(Slice(batch, 4, 8));
  model->Backward(0.5f, nullptr);
  const std::span<float> halves = model->grads();
  double diff2 = 0, norm2 = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    diff2 += (halves[i] - full[i]) * (halves[i] - full[i]);
    norm2 += full[i] * full[i];
  }
  EXPECT_LT(std::sqrt(diff2 / norm2), 1e-5);
  EXPECT_NEAR(model->Forward(batch), (l1 + l2) / 2, 1e-5);
}

TEST_P(ModelTest, SameSeedSameParameters) {
  ModelConfig config = GetParam();
  auto a = Make(config), b = Make(config);
  config.seed += 1;
  auto c = Make(config);
  EXPECT_TRUE(std::equal(a->params().begin(), a->params().end(), b->params().begin()));
  EXPECT_FALSE(std::equal(a->params().begin(), a->params().end(), c->params().begin()));
}

TEST_P(ModelTest, MalformedBatchGivesNanAndLeavesGradientsAlone) {
  auto model = Make(GetParam());
  Batch batch = MakeImageBatch(2, 15);
  batch.targets[1] = 10;
  model->ZeroGrads();
  EXPECT_TRUE(std::isnan(model->Forward(batch)));
  size_t published = 0;
  model->Backward(1.0f, [&](size_t, size_t count) { published += count; });
  EXPECT_EQ(published, model->params().size());
  for (float g : model->grads()) ASSERT_EQ(g, 0.0f);
  EXPECT_FALSE(CheckImageBatch(batch, 1, 28, 28, 10).ok());
  batch.inputs.pop_back();
  EXPECT_TRUE(std::isnan(model->Evaluate(batch).loss_sum));
}

TEST_P(ModelTest, StatsAreConsistent) {
  auto model = Make(GetParam());
  const ModelStats st = model->Stats();
  EXPECT_EQ(st.parameters, static_cast<int64_t>(model->params().size()));
  EXPECT_EQ(model->grads().size(), model->params().size());
  EXPECT_EQ(st.gradient_bytes, 4 * st.parameters);
  EXPECT_GT(st.flops_per_sample, 4.0 * st.parameters);  // at least forward + weight gradients
  EXPECT_GT(st.activation_bytes_per_sample, 4 * 784);
}

INSTANTIATE_TEST_SUITE_P(Models, ModelTest, ::testing::Values(Mlp({16}), Mlp({12, 8}), Cnn(2)),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(Mlp, DescribeAndStatsOfTheLargeModel) {
  auto model = Make(Mlp({2048, 2048}));
  EXPECT_EQ(model->Describe(), "mlp 784-2048-2048-10 (5.8 M parameters)");
  const int64_t p = 784 * 2048 + 2048 + 2048 * 2048 + 2048 + 2048 * 10 + 10;
  EXPECT_EQ(model->Stats().parameters, p);
  // forward 2*MACs, backward 2*MACs for weights plus 2*MACs for inputs beyond the first layer
  const double macs1 = 784.0 * 2048, macs2 = 2048.0 * 2048, macs3 = 2048.0 * 10;
  EXPECT_DOUBLE_EQ(model->Stats().flops_per_sample,
                   4 * (macs1 + macs2 + macs3) + 2 * (macs2 + macs3));
  EXPECT_EQ(model->Stats().activation_bytes_per_sample, 4 * (784 + 2048 + 2048 + 10 + 10));
}

TEST(Cnn, DescribeAndParameterCount) {
  auto model = Make(Cnn(32));
  const int64_t p = (32 * 9 + 32) + (64 * 32 * 9 + 64) + (128 * 64 * 49 + 128) + (10 * 128 + 10);
  EXPECT_EQ(model->Stats().parameters, p);
  EXPECT_NE(model->Describe().find("cnn"), std::string::npos);
  EXPECT_NE(model->Describe().find("(421.6 k parameters)"), std::string::npos) << model->Describe();
}

TEST(MakeModel, RejectsBadConfigsWithAMessage) {
  auto mlp = MakeModel(Mlp({16, 0}));
  ASSERT_FALSE(mlp.ok());
  EXPECT_NE(mlp.status().message().find("hidden"), std::string::npos);
  auto cnn = MakeModel(Cnn(0));
  ASSERT_FALSE(cnn.ok());
  EXPECT_NE(cnn.status().message().find("cnn_channels"), std::string::npos);
}

TEST(FormatParameterCount, PicksAUnit) {
  EXPECT_EQ(FormatParameterCount(950), "950");
  EXPECT_EQ(FormatParameterCount(269322), "269.3 k");
  EXPECT_EQ(FormatParameterCount(5824522), "5.8 M");
}

// Ten classes, each an image with a bright 8x8 block at its own place plus noise: easily
// separable, so a small mlp must drive the loss well below chance in a few dozen steps.
TEST(Mlp, LearnsASeparableProblem) {
  auto model = Make(Mlp({32}));
  auto opt = MakeOptimizer({.kind = OptimizerKind::kSgd, .lr = 0.05f, .momentum = 0.9f},
                           model->params().size());
  std::mt19937_64 rng(3);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  auto make = [&](int B) {
    Batch batch;
    batch.size = B;
    for (int b = 0; b < B; ++b) {
      const int k = static_cast<int>(rng() % 10);
      batch.targets.push_back(k);
      const int r0 = (k / 5) * 14, c0 = (k % 5) * 5;
      for (int i = 0; i < 784; ++i) {
        const int r = i / 28, c = i % 28;
        const bool on = r >= r0 && r < r0 + 8 && c >= c0 && c < c0 + 4;
        batch.inputs.push_back((on ? 1.5f : 0.0f) + noise(rng));
      }
    }
    return batch;
  };
  const Batch held_out = make(200);
  const EvalResult before = model->Evaluate(held_out);
  for (int step = 0; step < 60; ++step) {
    model->ZeroGrads();
    model->Forward(make(32));
    model->Backward(1.0f, nullptr);
    opt->Step(model->params(), model->grads());
  }
  const EvalResult after = model->Evaluate(held_out);
  EXPECT_LT(after.loss_sum / after.count, 0.25 * before.loss_sum / before.count);
  EXPECT_GT(after.correct, 180);
}

}  // namespace

void PrintTo(const ModelConfig& c, std::ostream* os) {
  *os << (c.kind == ModelKind::kCnn ? "cnn c=" + std::to_string(c.cnn_channels) : "mlp");
}

}  // namespace stepscope::nn
