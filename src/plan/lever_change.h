// The free levers as changes to a data-parallel job, neutral: what changes (a micro-batch, a
// bucket size), not how one launcher spells it. train_mapping.h maps a change onto
// `stepscope train`; a mapping onto another launcher (a user's command template) can sit beside
// it, reading the same fields.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "comm/allreduce.h"
#include "core/vocabulary.h"

namespace stepscope::plan {

// One change per field; an unset field keeps the job's own value.
struct LeverChange {
  std::optional<int> micro_batch;       // examples per replica per micro-batch
  std::optional<int> accumulation;      // micro-batches per step (reduce on the last)
  std::optional<double> bucket_mib;     // gradient bucket cap
  std::optional<bool> overlap;          // reduce buckets while backward still runs
  std::optional<comm::WireDtype> wire;  // precision of the gradients on the wire
  std::optional<int> loader_workers;    // input pipeline threads per replica
  std::optional<int> prefetch;          // batches prepared ahead
  std::optional<bool> balance_lengths;  // group examples of similar length per batch

  bool empty() const;
  // Every field `other` sets overrides this one's.
  void Merge(const LeverChange& other);
  bool operator==(const LeverChange&) const = default;
};

// The job's current values that the levers start from.
struct LeverBasis {
  int micro_batch = 1;
  int accumulation = 1;
  double bucket_mib = 25;
  bool overlap = true;
  comm::WireDtype wire = comm::WireDtype::kFp32;
  // The precision the low-precision lever reduces in: bf16, or fp16 where the job's all-reduce
  // has no bf16 (a --torch job on gloo).
  comm::WireDtype reduced_wire = comm::WireDtype::kBf16;
  int loader_workers = 1;
  int prefetch = 4;
  double gradient_mib = 0;  // gradient size per step; 0: unknown
  // The communication hook of the script's own that reduces the gradients (a --torch job's,
  // by name); empty: the reducer's own reduction, whose precision a lever can change.
  std::string comm_hook;
};

// The job's values once `change` is made: the basis the levers of a re-measured (levered)
// configuration start from. Length balancing is not a basis value and is ignored.
LeverBasis AfterChange(const LeverBasis& basis, const LeverChange& change);

// A lever the plan turned into a change.
struct PlannedLever {
  Lever lever;
  LeverChange change;
  std::string words;  // the change in words, from the value it replaces: "micro-batch 2 -> 4"
};

// A lever the plan cannot apply, and why.
struct SkippedLever {
  Lever lever;
  std::string reason;
};

struct LeverPlan {
  std::vector<PlannedLever> planned;  // in the order recommended
  std::vector<SkippedLever> skipped;
};

// The recommended levers (the verdict's, cheapest first) as changes from `basis`:
//   loader_workers_prefetch  workers max(2, 2w), prefetch max(8, 2p)
//   bigger_micro_batch       micro-batch doubled
//   gradient_accumulation    accumulation doubled (the same samples per reduction without the
//                            activation memory of a bigger micro-batch)
//   overlap_bucketing        overlap on, bucket BucketForOverlap(basis)
//   low_precision_reduction  bf16 on the wire; skipped where the script reduces through a
//                            communication hook of its own (its precision is the hook's)
//   balance_lengths          length balancing on
//   remove_straggler         skipped: a hardware or scheduling action, not a change to the job
// A lever recommended twice is planned once; one that would change nothing (bf16 already on the
// wire, overlap on with the bucket already that size) is skipped.
LeverPlan PlanLevers(const std::vector<Lever>& recommended, const LeverBasis& basis);

// A bucket cap that gives several buckets per step, so that the first ones travel while backward
// still runs: a quarter of the gradient, at least 0.25 MiB (smaller buckets pay more latency than
// they hide) and at most the job's own cap (also when that cap is below 0.25 MiB), rounded to
// 0.01 MiB where that stays within those bounds. The job's cap when the gradient size is unknown.
double BucketForOverlap(const LeverBasis& basis);

}  // namespace stepscope::plan
