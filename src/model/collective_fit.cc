#include "model/collective_fit.h"

#include <algorithm>
#include <cmath>

namespace stepscope::model {
namespace {

constexpr double kZ90 = 1.645;  // two-sided 90 % of a normal

std::vector<CollectiveSample> Usable(const std::vector<CollectiveSample>& samples) {
  std::vector<CollectiveSample> out;
  for (const CollectiveSample& s : samples) {
    if (s.replicas >= 2 && s.seconds >= 0 && std::isfinite(s.seconds)) out.push_back(s);
  }
  return out;
}

Estimate Around(double value, double half_width) {
  return {value, std::max(0.0, value - half_width), value + half_width};
}

// One-feature least squares through the origin: y = k x.
struct OneFit {
  double k = 0, se = 0, rss = 0;
};
OneFit FitOne(const std::vector<double>& x, const std::vector<double>& y) {
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) sxx += x[i] * x[i], sxy += x[i] * y[i];
  OneFit f;
  f.k = sxx > 0 ? std::max(0.0, sxy / sxx) : 0.0;
  for (size_t i = 0; i < x.size(); ++i) f.rss += std::pow(y[i] - f.k * x[i], 2);
  const double dof = static_cast<double>(x.size()) - 1;
  f.se = (dof > 0 && sxx > 0) ? std::sqrt(f.rss / dof / sxx) : 0.0;
  return f;
}

}  // namespace

double Pick(const Estimate& e, Side side) {
  switch (side) {
    case Side::kLow:
      return e.low;
    case Side::kHigh:
      return e.high;
    case Side::kValue:
      break;
  }
  return e.value;
}

Seconds AllreduceSeconds(const AlphaBeta& ab, int replicas, Bytes bytes, Side side) {
  if (replicas <= 1) return 0.0;
  return LatencySteps(replicas) * Pick(ab.alpha_s, side) +
         BandwidthShare(replicas) * static_cast<double>(bytes) * Pick(ab.seconds_per_byte, side);
}

AlphaBeta LinkAlphaBeta(double gbps, Seconds latency) {
  AlphaBeta ab;
  ab.alpha_s = Estimate::Exact(latency);
  ab.seconds_per_byte = Estimate::Exact(1.0 / (gbps * 1e9));
  ab.how = "given: a link of " + std::to_string(gbps) + " GB/s and " +
           std::to_string(latency * 1e6) + " us";
  return ab;
}

Result<AlphaBeta> FitAlphaBeta(const std::vector<CollectiveSample>& all) {
  const std::vector<CollectiveSample> s = Usable(all);
  if (s.empty()) return Status::Error("no reduction measured at 2 replicas or more");
  std::vector<double> x1, x2, y;
  for (const CollectiveSample& c : s) {
    x1.push_back(LatencySteps(c.replicas));
    x2.push_back(BandwidthShare(c.replicas) * static_cast<double>(c.bytes));
    y.push_back(c.seconds);
  }
  AlphaBeta ab;
  ab.samples = static_cast<int>(s.size());
  double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    a11 += x1[i] * x1[i], a12 += x1[i] * x2[i], a22 += x2[i] * x2[i];
    b1 += x1[i] * y[i], b2 += x2[i] * y[i];
  }
  const double det = a11 * a22 - a12 * a12;
  // Identified when the two features are not proportional over the samples (relative
  // determinant well above rounding).
  const bool both = y.size() >= 2 && det > 1e-9 * a11 * a22;
  double alpha = 0, inv_beta = 0, se_alpha = 0, se_beta = 0, rss = 0;
  if (both) {
    alpha = (a22 * b1 - a12 * b2) / det;
    inv_beta = (a11 * b2 - a12 * b1) / det;
  }
  if (both && alpha >= 0 && inv_beta >= 0) {
    for (size_t i = 0; i < y.size(); ++i) rss += std::pow(y[i] - alpha * x1[i] - inv_beta * x2[i], 2);
    ab.how = "least squares on " + std::to_string(y.size()) +
             " reductions: t = 2(N-1) alpha + 2(N-1)/N S / beta";
    if (y.size() > 2) {
      const double sigma2 = rss / static_cast<double>(y.size() - 2);
      se_alpha = std::sqrt(sigma2 * a22 / det);
      se_beta = std::sqrt(sigma2 * a11 / det);
    } else {
      ab.how += " (exactly determined by two points: no residual to give an interval)";
    }
  } else if (both && alpha < 0) {  // all bandwidth
    const OneFit f = FitOne(x2, y);
    inv_beta = f.k, se_beta = f.se, rss = f.rss, alpha = 0;
    ab.alpha_assumed = true;
    ab.how = "latency fitted negative, fixed at 0; bandwidth by least squares on " +
             std::to_string(y.size()) + " reductions";
  } else if (both) {  // all latency
    const OneFit f = FitOne(x1, y);
    alpha = f.k, se_alpha = f.se, rss = f.rss, inv_beta = 0;
    ab.beta_assumed = true;
    ab.how = "bandwidth term fitted negative, fixed at 0; latency by least squares on " +
             std::to_string(y.size()) + " reductions";
  } else {
    // One replica count and one payload (or too few points): the time is all bandwidth.
    const OneFit f = FitOne(x2, y);
    inv_beta = f.k, se_beta = f.se, rss = f.rss, alpha = 0;
    ab.alpha_assumed = true;
    ab.how = "latency not identified (one replica count and payload): assumed 0, all of the "
             "time taken as bandwidth, from " + std::to_string(y.size()) + " reductions";
  }
  ab.alpha_s = Around(alpha, kZ90 * se_alpha);
  ab.seconds_per_byte = Around(inv_beta, kZ90 * se_beta);
  ab.residual_rms_s = std::sqrt(rss / static_cast<double>(y.size()));
  return ab;
}

Result<AlphaBeta> FitBandwidthGivenLatency(const std::vector<CollectiveSample>& all,
                                           const Estimate& alpha_s) {
  const std::vector<CollectiveSample> s = Usable(all);
  if (s.empty()) return Status::Error("no reduction measured at 2 replicas or more");
  std::vector<double> x, y;
  for (const CollectiveSample& c : s) {
    x.push_back(BandwidthShare(c.replicas) * static_cast<double>(c.bytes));
    y.push_back(c.seconds - LatencySteps(c.replicas) * alpha_s.value);
  }
  const OneFit f = FitOne(x, y);
  AlphaBeta ab;
  ab.samples = static_cast<int>(s.size());
  ab.alpha_s = alpha_s;
  ab.alpha_assumed = true;
  ab.seconds_per_byte = Around(f.k, kZ90 * f.se);
  ab.residual_rms_s = std::sqrt(f.rss / static_cast<double>(s.size()));
  ab.how = "bandwidth by least squares on " + std::to_string(s.size()) +
           " reductions, latency shared with the reference precision";
  return ab;
}

}  // namespace stepscope::model
