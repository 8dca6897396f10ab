// Cross-rank skew: per-rank compute spread, arrival skew at each collective, which rank arrives
// last, and the straggler ranks. Definitions: docs/metrics.md.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/step_record.h"
#include "core/units.h"

namespace stepscope::analysis {

struct SkewOptions {
  // A straggler slow in fewer than this share of the steps is slowed in bursts (RankSkew::
  // slow_steps): its evidence and lever say so.
  double persistent_steps = 0.8;
  // A straggler arrives last in at least this fraction of the collectives (or steps), or causes
  // at least this fraction of the waiting for the last rank.
  double last_fraction = 0.6;
  // ... and its mean compute (or its mean time to its last arrival) exceeds the median of the
  // other ranks' by at least this fraction.
  double compute_margin = 0.10;
  // ... and what it adds (its compute, or its lateness, above the others' median) is at least
  // this share of its mean step: a 10 % excess of a compute that is a sliver of the step (an
  // input-bound job) is noise, not a straggler. The share is the verdict's smallest worthwhile
  // lever gain (VerdictOptions::min_lever_gain): naming a straggler recommends removing it, and
  // removing a rank that adds less than this cannot gain more.
  double material_share = 0.02;
};

struct RankSkew {
  int rank = 0;
  Seconds compute_mean = 0;
  int64_t last_arrivals = 0;  // collectives (or steps) at which this rank arrived last
  double last_fraction = 0;   // last_arrivals / SkewReport::arrival_events
  // Its share of the waiting for the last rank: summed over the events where it arrived last,
  // its lead over the second-to-last, against that sum over all ranks.
  double wait_share = 0;
  double compute_excess = 0;  // compute_mean / median of the other ranks' - 1
  // Mean time from step start to this rank's last arrival at a collective (0 without any), and
  // its excess over the other ranks' median: lateness that a source did not classify as compute
  // (a slow loader on one rank, a sleep) still shows here.
  Seconds pre_arrival_mean = 0;
  double arrival_excess = 0;
  // Of compute_mean, the mean time this rank waited for a CPU core (StepRecord::cpu_wait; 0
  // where unknown).
  Seconds cpu_wait_mean = 0;
  // Its typical excess on a core: per step, its compute less the time it waited for a core,
  // against the median of the other ranks' at that step; the 10 % trimmed mean over the steps
  // (core/statistics.h TrimmedMean), in seconds and as a fraction of the others'. A rank made
  // slow by sharing its core, or by one disturbed step, has a large mean excess and a small
  // typical one; a slower rank has both.
  Seconds typical_added = 0;
  double typical_excess = 0;
  // The share of the steps in which its compute on a core exceeds the other ranks' median at that
  // step by the compute margin: near 1 for a persistently slower rank (its device, placement or
  // share of the work), well under it for one slowed in bursts (a co-tenant, throttling).
  double slow_steps = 0;
  Seconds input_wait_mean = 0;    // this rank's mean input wait
  Seconds others_input_wait = 0;  // the median of the other ranks' mean input waits
};

struct CollectiveSkew {
  int index = 0;     // collective index within the step
  Seconds mean = 0;  // mean over steps of max - min ready time across ranks
  Seconds p90 = 0;
};

struct SkewReport {
  int replicas = 0;
  Seconds compute_spread = 0;     // max - min of the ranks' mean compute
  double compute_cv = 0;          // population std-dev / mean of the ranks' mean compute
  Seconds arrival_skew_mean = 0;  // over all collectives of all steps
  Seconds arrival_skew_p90 = 0;
  int64_t arrival_events = 0;  // collectives (or, without collectives, steps) with a last rank
  bool by_steps = false;       // true when no collectives were recorded: last = most compute
  std::vector<CollectiveSkew> collectives;
  std::vector<RankSkew> ranks;  // ordered by rank
  std::vector<int> straggler_ranks;
  std::vector<std::string> evidence;  // one sentence per straggler, or why there is none
};

Result<SkewReport> AnalyzeSkew(const std::vector<StepRecord>& records,
                               const SkewOptions& options = {});

// A straggler slowed in bursts (slow in fewer than options.persistent_steps of the steps).
bool Intermittent(const RankSkew& rank, const SkewOptions& options = {});
// "it is slow in 100% of the steps: a persistently slower rank (...)", or in bursts.
std::string StragglerKindWords(const RankSkew& rank, const SkewOptions& options = {});

}  // namespace stepscope::analysis
