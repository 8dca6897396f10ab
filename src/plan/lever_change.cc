#include "plan/lever_change.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stepscope::plan {
namespace {

template <typename T>
void Take(std::optional<T>* field, const std::optional<T>& other) {
  if (other) *field = other;
}

PlannedLever Plan(Lever lever, const LeverBasis& b) {
  PlannedLever p{lever, {}, {}};
  LeverChange& c = p.change;
  switch (lever) {
    case Lever::kLoaderWorkersPrefetch:
      c.loader_workers = std::max(2, 2 * b.loader_workers);
      c.prefetch = std::max(8, 2 * b.prefetch);
      p.words = fmt::format("loader workers {} -> {}, prefetch {} -> {}", b.loader_workers,
                            *c.loader_workers, b.prefetch, *c.prefetch);
      break;
    case Lever::kBiggerMicroBatch:
      c.micro_batch = 2 * b.micro_batch;
      p.words = fmt::format(
          "micro-batch {} -> {}; accumulating 2 micro-batches does the same where activation "
          "memory binds",
          b.micro_batch, *c.micro_batch);
      break;
    case Lever::kGradientAccumulation:
      c.accumulation = 2 * b.accumulation;
      p.words = fmt::format("accumulation {} -> {} micro-batches per step", b.accumulation,
                            *c.accumulation);
      break;
    case Lever::kOverlapBucketing:
      c.overlap = true;
      c.bucket_mib = BucketForOverlap(b);
      p.words = fmt::format("{}bucket {} -> {} MiB", b.overlap ? "" : "overlap off -> on, ",
                            b.bucket_mib, *c.bucket_mib);
      break;
    case Lever::kLowPrecisionReduction:
      c.wire = b.reduced_wire;
      p.words =
          fmt::format("wire precision {} -> {}", comm::ToString(b.wire), comm::ToString(*c.wire));
      break;
    case Lever::kBalanceLengths:
      c.balance_lengths = true;
      p.words = "batches of similar-length examples";
      break;
    case Lever::kRemoveStraggler:
      break;  // not a change to the job
  }
  return p;
}

// True when some field of `c` differs from the job's value (length balancing: always).
bool ChangesAnything(const LeverChange& c, const LeverBasis& b) {
  auto differs = [](const auto& field, const auto& current) { return field && *field != current; };
  return differs(c.micro_batch, b.micro_batch) || differs(c.accumulation, b.accumulation) ||
         differs(c.bucket_mib, b.bucket_mib) || differs(c.overlap, b.overlap) ||
         differs(c.wire, b.wire) || differs(c.loader_workers, b.loader_workers) ||
         differs(c.prefetch, b.prefetch) || c.balance_lengths.has_value();
}

}  // namespace

bool LeverChange::empty() const { return *this == LeverChange{}; }

void LeverChange::Merge(const LeverChange& other) {
  Take(&micro_batch, other.micro_batch);
  Take(&accumulation, other.accumulation);
  Take(&bucket_mib, other.bucket_mib);
  Take(&overlap, other.overlap);
  Take(&wire, other.wire);
  Take(&loader_workers, other.loader_workers);
  Take(&prefetch, other.prefetch);
  Take(&balance_lengths, other.balance_lengths);
}

LeverBasis AfterChange(const LeverBasis& basis, const LeverChange& change) {
  LeverBasis b = basis;
  b.micro_batch = change.micro_batch.value_or(b.micro_batch);
  b.accumulation = change.accumulation.value_or(b.accumulation);
  b.bucket_mib = change.bucket_mib.value_or(b.bucket_mib);
  b.overlap = change.overlap.value_or(b.overlap);
  b.wire = change.wire.value_or(b.wire);
  b.loader_workers = change.loader_workers.value_or(b.loader_workers);
  b.prefetch = change.prefetch.value_or(b.prefetch);
  return b;
}

double BucketForOverlap(const LeverBasis& basis) {
  const double cap = basis.bucket_mib;
  if (!(basis.gradient_mib > 0)) return cap;
  // The floor never exceeds the cap: std::clamp needs low <= high.
  const double bucket = std::clamp(basis.gradient_mib / 4, std::min(0.25, cap), cap);
  const double rounded = std::round(bucket * 100) / 100;
  return rounded > 0 && rounded <= cap ? rounded : bucket;
}

LeverPlan PlanLevers(const std::vector<Lever>& recommended, const LeverBasis& basis) {
  LeverPlan plan;
  for (Lever lever : recommended) {
    const bool seen = std::any_of(plan.planned.begin(), plan.planned.end(),
                                  [lever](const PlannedLever& p) { return p.lever == lever; }) ||
                      std::any_of(plan.skipped.begin(), plan.skipped.end(),
                                  [lever](const SkippedLever& s) { return s.lever == lever; });
    if (seen) continue;
    if (lever == Lever::kRemoveStraggler) {
      plan.skipped.push_back(
          {lever, "a hardware or scheduling action, not a change to the job; skipped"});
      continue;
    }
    if (lever == Lever::kLowPrecisionReduction && !basis.comm_hook.empty()) {
      plan.skipped.push_back(
          {lever, "the script reduces through its own communication hook (" + basis.comm_hook +
                      "), whose wire precision stepscope does not change; skipped (a "
                      "compression hook such as PyTorch's bf16_compress_hook is the script's "
                      "own lever)"});
      continue;
    }
    PlannedLever planned = Plan(lever, basis);
    if (!ChangesAnything(planned.change, basis)) {
      plan.skipped.push_back({lever, "the job already has it (" + planned.words + "); skipped"});
      continue;
    }
    plan.planned.push_back(std::move(planned));
  }
  return plan;
}

}  // namespace stepscope::plan
