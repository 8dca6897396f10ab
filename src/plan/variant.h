// The runs diagnose makes, by identity: which variant of the workload, at how many replicas,
// which repeat. A run's name is also its folder under DIR/runs/:
//   <variant>-n<N>        the first run of a variant at N replicas
//   <variant>-n<N>-r<k>   its k-th repeat (k >= 2), e.g. baseline-n4-r2
// Variant names: baseline; the ablations no_reduce, synthetic_input, double_batch; levers (every
// applied lever together); lever_<lever> (one lever on its own, e.g. lever_overlap_bucketing);
// the reduced-precision check wire_fp32, wire_reduced, wire_fp32_seed2; the noise-scale
// measurement noise_scale.
#pragma once

#include <string>

#include "core/vocabulary.h"

namespace stepscope::plan {

enum class VariantKind {
  kBaseline,        // the workload as given
  kNoReduce,        // ablation: replicas train alone, the reduction is skipped
  kSyntheticInput,  // ablation: one in-memory batch instead of the input pipeline
  kDoubleBatch,     // ablation: twice the micro-batch
  kOneLever,        // one free lever on its own
  kAllLevers,       // every applied free lever together
  // The reduced-precision check: unpaced numerics runs at 2 replicas, same seed, fp32 against
  // the reduced wire, and fp32 with another seed as the yardstick of run-to-run spread.
  kWireFp32,
  kWireReduced,
  kWireReseeded,
  // The gradient noise scale measured: an unpaced run at 2 replicas, fp32 on the wire, with the
  // gradient norms sampled every step, long enough to see B_noise change over training.
  kNoiseScale,
};

struct Variant {
  VariantKind kind = VariantKind::kBaseline;
  Lever lever = Lever::kBiggerMicroBatch;  // which lever; read only for kOneLever

  static Variant Of(VariantKind kind) { return {kind, Lever::kBiggerMicroBatch}; }
  static Variant OneLever(Lever lever) { return {VariantKind::kOneLever, lever}; }
  bool operator==(const Variant& other) const {
    return kind == other.kind && (kind != VariantKind::kOneLever || lever == other.lever);
  }
};

// One run: a variant at a replica count, and which repeat of it.
struct RunId {
  Variant variant;
  int replicas = 1;
  int repeat = 1;  // 1: the first run; k >= 2: the k-th repeat

  bool operator==(const RunId&) const = default;
};

// "baseline", "no_reduce", ..., "levers", "lever_overlap_bucketing".
std::string VariantName(const Variant& variant);
// "baseline-n4", "baseline-n4-r2".
std::string RunName(const RunId& run);

// True for the three ablations.
bool IsAblation(VariantKind kind);

// True for a run folder of a variant that measures numerics unpaced, not the step time (the
// reduced-precision check's runs and the noise-scale run): the step-time model neither fits
// nor checks them.
bool IsNumericsRun(const std::string& run_name);

}  // namespace stepscope::plan
