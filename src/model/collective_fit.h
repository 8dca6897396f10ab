// The cost of one all-reduce as latency and bandwidth terms (the alpha-beta model of a ring:
// 2(N-1) latency steps and 2(N-1)/N of the payload through each link), fitted by least squares
// from measured reductions.
#pragma once

#include <string>
#include <vector>

#include "core/estimate.h"
#include "core/status.h"
#include "core/units.h"

namespace stepscope::model {

// One measured reduction: N ranks, payload bytes per rank (at wire precision), its duration
// from the last rank's arrival to the end.
struct CollectiveSample {
  int replicas = 0;
  Bytes bytes = 0;
  Seconds seconds = 0;
  // Of `seconds`, the time it ran beside backward (0: it started after backward ended), where
  // it progressed at the overlap rate (model/fit.cc).
  Seconds beside = 0;
  // A latency probe's (run.json latency_probe): timed after the steps, none of a step's.
  bool probe = false;
};

struct AlphaBeta {
  Estimate fixed_s;            // per reduction, whatever N (s): launch and scheduling costs
  Estimate alpha_s;            // per latency step (s)
  Estimate seconds_per_byte;   // 1 / link bandwidth (s/B)
  bool alpha_assumed = false;  // not identified by the samples (fixed, see `how`)
  bool beta_assumed = false;
  int samples = 0;
  double residual_rms_s = 0;  // root mean square of the fit's residuals
  std::string how;            // how the constants were obtained, in words
};

// Latency and bandwidth features of the ring formula at N ranks.
inline double LatencySteps(int replicas) { return replicas <= 1 ? 0.0 : 2.0 * (replicas - 1); }
inline double BandwidthShare(int replicas) {
  return replicas <= 1 ? 0.0 : 2.0 * (replicas - 1) / replicas;
}

// Duration of one all-reduce of `bytes` at N ranks, with alpha and 1/beta chosen by `pick`
// (the value, or the low or high end of each interval).
enum class Side { kValue, kLow, kHigh };
double Pick(const Estimate& e, Side side);
Seconds AllreduceSeconds(const AlphaBeta& ab, int replicas, Bytes bytes, Side side = Side::kValue);

// A link given as bandwidth (GB/s, 1e9 bytes) and latency (s) as exact constants.
AlphaBeta LinkAlphaBeta(double gbps, Seconds latency);

// Least squares on the three terms (fixed, latency, bandwidth), each kept non-negative and
// identified (one that is negative, or that the samples cannot tell from the others, is fixed
// at 0 and said so). Intervals: +-1.645 standard errors (90 %). Errors: no sample at N >= 2.
Result<AlphaBeta> FitAlphaBeta(const std::vector<CollectiveSample>& samples);
// 1/beta alone, alpha and the fixed cost given (a precision measured at one replica count,
// sharing another's latency).
Result<AlphaBeta> FitBandwidthGivenLatency(const std::vector<CollectiveSample>& samples,
                                           const Estimate& alpha_s, const Estimate& fixed_s);

}  // namespace stepscope::model
