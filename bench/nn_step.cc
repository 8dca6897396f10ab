// bench_nn_step: how fast one replica runs a training step of the models in nn/, and how close
// that is to the bare sgemm calls the step is made of (measured in the same run, same shapes).
//
//   bench_nn_step [--batch B] [--steps S] [--repeats R] [--threads T]
//
// A step is Forward + Backward + SGD StepAndZeroGrads. Prints, per model: step time min/median/p95
// over repeats, samples/s at the median, achieved GFLOP/s (ModelStats::flops_per_sample), the
// sgemm-only time and GFLOP/s, and their ratio. Each timed run is also checked: the loss and every
// gradient must stay finite (#wrong).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "nn/model.h"
#include "nn/optimizer.h"

namespace {

using stepscope::Batch;
using namespace stepscope::nn;
using Clock = std::chrono::steady_clock;

struct Options {
  int batch = 32;   // examples per step
  int steps = 20;   // steps per timed repeat
  int repeats = 7;  // timed repeats (min/median/p95 over these)
  int threads = 1;  // OpenBLAS threads
};

// One sgemm call shape (row-major C (M,N) += op(A) (M,K) @ op(B) (K,N)), `count` times a step.
struct Gemm {
  bool trans_a, trans_b;
  int M, N, K, count;
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct Summary {
  double min, median, p95;
};

Summary Summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t p95 = std::min(v.size() - 1, static_cast<size_t>(std::ceil(0.95 * v.size())) - 1);
  return {v.front(), v[v.size() / 2], v[p95]};
}

// The sgemm calls one training step makes (forward, weight and input gradients).
std::vector<Gemm> MlpGemms(const std::vector<int>& dims, int B) {
  std::vector<Gemm> g;
  for (size_t l = 0; l + 1 < dims.size(); ++l) {
    const int C = dims[l], OC = dims[l + 1];
    g.push_back({false, true, B, OC, C, 1});              // out = inp @ W^T
    g.push_back({true, false, OC, C, B, 1});              // dW += dout^T @ inp
    if (l > 0) g.push_back({false, false, B, C, OC, 1});  // dinp += dout @ W
  }
  return g;
}

std::vector<Gemm> CnnGemms(int c, int B) {
  const int c2 = 2 * c, hw = 28 * 28, hw2 = hw / 4, flat = c2 * 49;
  return {
      {false, false, c, hw, 9, B},        // conv1 forward, per image
      {false, true, c, 9, hw, B},         // conv1 dW
      {false, false, c2, hw2, 9 * c, B},  // conv2 forward
      {false, true, c2, 9 * c, hw2, B},   // conv2 dW
      {true, false, 9 * c, hw2, c2, B},   // conv2 dcol
      {false, true, B, 128, flat, 1},     // fc1 forward
      {true, false, 128, flat, B, 1},     // fc1 dW
      {false, false, B, flat, 128, 1},    // fc1 dinp
      {false, true, B, 10, 128, 1},       // fc2 forward
      {true, false, 10, 128, B, 1},       // fc2 dW
      {false, false, B, 128, 10, 1},      // fc2 dinp
  };
}

// Seconds for one round of `gemms` (median over repeats) and its flop count.
std::pair<double, double> TimeGemms(const std::vector<Gemm>& gemms, const Options& opt) {
  struct Buffers {
    std::vector<float> a, b, c;
  };
  std::vector<Buffers> bufs;
  double flops = 0;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Gemm& g : gemms) {
    Buffers b{std::vector<float>(static_cast<size_t>(g.M) * g.K),
              std::vector<float>(static_cast<size_t>(g.K) * g.N),
              std::vector<float>(static_cast<size_t>(g.M) * g.N, 0.0f)};
    for (float& x : b.a) x = u(rng);
    for (float& x : b.b) x = u(rng);
    bufs.push_back(std::move(b));
    flops += 2.0 * g.M * g.N * g.K * g.count;
  }
  auto round = [&] {
    for (size_t i = 0; i < gemms.size(); ++i) {
      const Gemm& g = gemms[i];
      const int lda = g.trans_a ? g.M : g.K, ldb = g.trans_b ? g.K : g.N;
      for (int r = 0; r < g.count; ++r) {
        cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
                    g.trans_b ? CblasTrans : CblasNoTrans, g.M, g.N, g.K, 1.0f, bufs[i].a.data(),
                    lda, bufs[i].b.data(), ldb, 1.0f, bufs[i].c.data(), g.N);
      }
    }
  };
  for (int w = 0; w < 3; ++w) round();
  std::vector<double> t;
  for (int r = 0; r < opt.repeats; ++r) {
    const auto start = Clock::now();
    for (int s = 0; s < opt.steps; ++s) round();
    t.push_back(Seconds(Clock::now() - start) / opt.steps);
  }
  return {Summarise(t).median, flops};
}

bool AllFinite(std::span<const float> v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

void Run(const std::string& name, const ModelConfig& config, const std::vector<Gemm>& gemms,
         const Options& opt) {
  auto made = MakeModel(config);
  if (!made.ok()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), made.status().message().c_str());
    return;
  }
  auto model = std::move(made).value();
  auto sgd = MakeOptimizer({.kind = OptimizerKind::kSgd, .lr = 0.01f, .momentum = 0.9f},
                           model->params().size());
  Batch batch;
  batch.size = opt.batch;
  std::mt19937 rng(2);
  std::normal_distribution<float> n(0, 1);
  for (int i = 0; i < opt.batch * 784; ++i) batch.inputs.push_back(n(rng));
  for (int b = 0; b < opt.batch; ++b) batch.targets.push_back(b % 10);

  int wrong = 0;
  // ZeroGrads once; afterwards the optimizer zeroes the gradients as it reads them
  model->ZeroGrads();
  auto step = [&] {
    const float loss = model->Forward(batch);
    model->Backward(1.0f, nullptr);
    sgd->StepAndZeroGrads(model->params(), model->grads());
    return loss;
  };
  for (int w = 0; w < 3; ++w) step();
  std::vector<double> t;
  for (int r = 0; r < opt.repeats; ++r) {
    float loss = 0;
    const auto start = Clock::now();
    for (int s = 0; s < opt.steps; ++s) loss = step();
    t.push_back(Seconds(Clock::now() - start) / opt.steps);
    if (!std::isfinite(loss) || !AllFinite(model->params())) ++wrong;
  }
  const Summary s = Summarise(t);
  const double flops = model->Stats().flops_per_sample * opt.batch;
  const auto [gemm_t, gemm_flops] = TimeGemms(gemms, opt);
  std::printf("%-34s %9.3f %9.3f %9.3f %11.0f %8.1f | %9.3f %8.1f %6.2f %6d\n",
              model->Describe().c_str(), s.min * 1e3, s.median * 1e3, s.p95 * 1e3,
              opt.batch / s.median, flops / s.median * 1e-9, gemm_t * 1e3,
              gemm_flops / gemm_t * 1e-9, s.median / gemm_t, wrong);
  if (std::fabs(gemm_flops - flops) > 1e-6 * flops) {
    std::printf("  note: sgemm flops %.4g differ from ModelStats %.4g\n", gemm_flops, flops);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (value < 1) {
      std::fprintf(stderr, "bench_nn_step: %s needs a positive integer\n", flag.c_str());
      return 2;
    }
    if (flag == "--batch")
      opt.batch = value;
    else if (flag == "--steps")
      opt.steps = value;
    else if (flag == "--repeats")
      opt.repeats = value;
    else if (flag == "--threads")
      opt.threads = value;
    else {
      std::fprintf(stderr, "bench_nn_step: unknown flag %s (--batch --steps --repeats --threads)\n",
                   flag.c_str());
      return 2;
    }
  }
  openblas_set_num_threads(opt.threads);
  std::printf("batch %d, %d steps x %d repeats, %d OpenBLAS thread(s); times in ms per step\n",
              opt.batch, opt.steps, opt.repeats, opt.threads);
  std::printf("%-34s %9s %9s %9s %11s %8s | %9s %8s %6s %6s\n", "model", "min", "median", "p95",
              "samples/s", "GFLOP/s", "sgemm", "GFLOP/s", "ratio", "#wrong");
  ModelConfig small;
  small.hidden = {256, 256};
  Run("mlp-256", small, MlpGemms({784, 256, 256, 10}, opt.batch), opt);
  ModelConfig large;
  large.hidden = {2048, 2048};
  Run("mlp-2048", large, MlpGemms({784, 2048, 2048, 10}, opt.batch), opt);
  ModelConfig cnn;
  cnn.kind = ModelKind::kCnn;
  cnn.cnn_channels = 32;
  Run("cnn-32", cnn, CnnGemms(32, opt.batch), opt);
  return 0;
}
