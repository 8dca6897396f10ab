// Gradient noise scale (McCandlish et al. 2018) from the gradient norms in step records:
// the local |g|^2 at batch b (samples per rank per step) and the reduced |G|^2 at B = N b.
// Definitions: docs/metrics.md.
#pragma once

#include <string>
#include <vector>

#include "core/step_record.h"

namespace stepscope::decide {

struct NoiseScale {
  bool known = false;
  std::string reason;       // why it is unknown, or which data it came from
  double grad_sq = 0;       // |G|^2, the true gradient's squared norm
  double trace_sigma = 0;   // tr(Sigma), per-sample gradient variance
  double b_noise = 0;       // tr(Sigma) / |G|^2, in samples
  double local_batch = 0;   // b
  double global_batch = 0;  // B = N b
  int64_t steps = 0;        // steps used
  // The pooled estimate's band (EstimatePooledNoiseScale): a bootstrap over the steps of the
  // ratio of the two means; both equal b_noise when not bootstrapped.
  double b_noise_low = 0, b_noise_high = 0;
  int runs = 0;  // runs pooled (1 for a single run's estimate)
  // How it was estimated: "pooled" (the ratio of the means over the steps of the runs pooled,
  // EstimatePooledNoiseScale, NoiseScaleFromMeans) or "over_training" (the mean over stretches
  // of training, NoiseScaleOverTraining; its band is then the least and the most a stretch saw).
  std::string method = "pooled";
  // The training progress the norms were sampled at (pooled estimate): the steps since
  // initialisation, first and last, and the most samples any pooled run had trained on by its
  // last sampled step. B_noise grows as training proceeds (McCandlish et al. 2018), so an
  // estimate this early in training understates the noise scale later on; -1: unknown.
  int64_t first_step = -1, last_step = -1;
  double samples_seen = -1;
};

// Unknown when there is one rank, no gradient norms, or a non-positive estimate.
NoiseScale EstimateNoiseScale(const std::vector<StepRecord>& records);

// The estimate pooled over several runs (every N > 1 baseline, repeat and double-batch run of a
// sweep): each step with every rank's local norm and the reduced norm gives unbiased estimates
// of |G|^2 and tr(Sigma) at its own b and B; the two are averaged separately over all steps of
// all runs and divided at the end, with a 90 % bootstrap band over the steps. Unknown when no
// run has such steps or an average is not positive.
NoiseScale EstimatePooledNoiseScale(const std::vector<const std::vector<StepRecord>*>& runs);

// The estimate from means over steps (and ranks) of |G_b|^2 and |G_B|^2: numerators and
// denominators averaged before dividing. Unknown when B <= b or an estimate is not positive.
NoiseScale NoiseScaleFromMeans(double mean_local_sq, double mean_global_sq, double b, double big_b);

// The noise scale averaged over training progress. B_noise grows as training proceeds, and the
// ratio of the means over a whole run is dominated by the first steps, where |G|^2 is large: it
// understates the noise scale that most of the run's steps see. Since each stretch of training
// takes S_min (1 + B_noise(t) / B) steps, what predicts the steps of a whole run is B_noise
// averaged over its steps: the run's sampled steps (per step the mean local |G_b|^2 over ranks
// and the reduced |G_B|^2, in training order) are cut into `windows` stretches of equal length,
// each gives its own ratio of means, and the estimate is their mean. When a stretch's estimate
// is not positive (|G|^2 lost in the noise of a short run) the cut is halved, down to 2
// stretches. Unknown when B <= b, there are fewer than 2 sampled steps per stretch, or even 2
// stretches do not all give a positive estimate.
NoiseScale NoiseScaleOverTraining(const std::vector<double>& local_sq,
                                  const std::vector<double>& global_sq, double b, double big_b,
                                  int windows = 8);

// The noise scale over the training of one run of more than one replica (diagnose's dedicated
// noise-scale run, docs/decide.md): every step, warm-up included (it trains too), where every
// rank recorded its local norm and the reduced norm, in training order, through
// NoiseScaleOverTraining; the progress fields (first_step, last_step, samples_seen) and runs = 1
// are set. Unknown as NoiseScaleOverTraining is, or when no step has the norms.
NoiseScale NoiseScaleOfRun(const std::vector<StepRecord>& records, int windows = 8);

// Steps to a target loss at global batch `batch`: S = S_min (1 + B_noise / B).
double StepsToTarget(double min_steps, double b_noise, double batch);

// Samples needed at batch `to` relative to batch `from`: (1 + to/B_noise) / (1 + from/B_noise)
// (E = E_min (1 + B / B_noise)); 1 means the bigger batch costs no extra samples.
double RelativeSampleCost(double b_noise, double from, double to);

}  // namespace stepscope::decide
