#include "decide/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text_format.h"
#include "decide/script_collectives.h"

namespace stepscope::decide {
namespace {

const analysis::AblationCheck* FindCheck(const analysis::AblationReport& r,
                                         AblationCheckKind kind) {
  for (const analysis::AblationCheck& c : r.checks) {
    if (c.check == kind) return &c;
  }
  return nullptr;
}

// Seconds per step the straggler ranks add: their compute (or time to their last arrival)
// above the other ranks' median.
double StragglerExcess(const analysis::SkewReport& skew) {
  double excess = 0;
  for (int rank : skew.straggler_ranks) {
    for (const analysis::RankSkew& r : skew.ranks) {
      if (r.rank != rank) continue;
      const double compute_median = r.compute_mean / (1 + r.compute_excess);
      const double arrival_median = r.pre_arrival_mean / (1 + r.arrival_excess);
      excess =
          std::max({excess, r.compute_mean - compute_median, r.pre_arrival_mean - arrival_median});
    }
  }
  return excess;
}

void AddAblationEvidence(const analysis::AblationReport& ablations, AblationCheckKind kind,
                         std::vector<std::string>* evidence) {
  const std::string_view name = ToString(kind);
  const analysis::AblationCheck* c = FindCheck(ablations, kind);
  if (c == nullptr) {
    evidence->push_back(fmt::format("no {} ablation was run to confirm it", name));
  } else {
    evidence->push_back(fmt::format("{} ablation {}: {}", name,
                                    c->agrees ? "confirms" : "does not confirm", c->sentence));
  }
}

bool Has(const std::vector<BindingCandidate>& c, Binding b) {
  for (const BindingCandidate& x : c) {
    if (x.binding == b) return true;
  }
  return false;
}

// How to tell the candidates apart: the ablations that separate them, where they were not run
// at the largest count (`ablations`), and more steps or repeats.
std::string SeparateAdvice(const std::vector<BindingCandidate>& c,
                           const analysis::AblationReport& ablations) {
  std::vector<std::string> runs;
  if (Has(c, Binding::kCommunication) &&
      FindCheck(ablations, AblationCheckKind::kNoReduce) == nullptr) {
    runs.push_back(
        "the no-reduce ablation (train --no-reduce: communication goes, a slow rank "
        "stays slow)");
  }
  if (Has(c, Binding::kInput) &&
      FindCheck(ablations, AblationCheckKind::kSyntheticInput) == nullptr) {
    runs.push_back("the synthetic-input ablation (train --synthetic-input: input wait goes)");
  }
  runs.push_back("more steps or repeated runs (diagnose --repeats 3) so that the intervals narrow");
  return fmt::format("To separate them, run {}.", fmt::join(runs, "; or "));
}

std::string CandidateWords(const std::vector<BindingCandidate>& c) {
  std::vector<std::string> parts;
  for (const BindingCandidate& x : c) {
    parts.push_back(fmt::format("{} {} to {} devices", ToString(x.binding), Fixed(x.devices.low, 2),
                                Fixed(x.devices.high, 2)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Compute growth since one replica that the no-reduce ablation removed as well as the exposed
// communication: the reduction's own cost on the step's compute (on a host it competes with the
// compute for the cores and memory bandwidth; on a device, for its cores). `noise_sign` -1 reads
// the ablation's saving at the low end of its noise, +1 at the high end.
Seconds ComputeMovedByNoReduce(const analysis::AblationCheck& nr, Seconds comm, Seconds compute,
                               int noise_sign) {
  return std::clamp(nr.measured + noise_sign * nr.noise - comm, 0.0, std::max(compute, 0.0));
}

}  // namespace

std::string_view DecisionWords(Decision d) {
  switch (d) {
    case Decision::kBuyDevices:
      return "buy more devices";
    case Decision::kUpgradeInterconnect:
      return "do not buy more devices; upgrade the interconnect";
    case Decision::kUpgradeDevices:
      return "do not buy more devices; upgrade the devices";
    case Decision::kPullLevers:
      return "not yet: pull the free levers first";
    case Decision::kStay:
      return "stay at this size";
    case Decision::kReduceDevices:
      return "use fewer devices";
  }
  return "?";
}

std::string_view CurrencyWords(Currency c) {
  return c == Currency::kTime ? "wall-clock time to the target (within any budget)"
                              : "cost to the target (within any deadline)";
}

Verdict DecideVerdict(const VerdictInputs& in, const VerdictOptions& o) {
  Verdict v;
  const analysis::Components& c = in.largest.job;
  const double t = c.step;
  const double s = in.largest.samples_per_step;
  const double x = in.largest.samples_per_s;
  const int n = in.largest.replicas;
  const analysis::ScalingPoint* last = in.points.empty() ? nullptr : &in.points.back();
  const double eff = last != nullptr ? last->efficiency : 1.0;
  const double x1 =
      (last != nullptr && last->speedup > 0) ? last->samples_per_s / last->speedup : 0;
  const double excess = StragglerExcess(in.skew);
  v.straggler_ranks = in.skew.straggler_ranks;

  // --- binding constraint: the candidate that lost the most devices ---
  BindingLosses split = SplitLosses(in.reference, in.reference_estimated, in.largest, excess);
  if (!in.largest_repeats.empty()) {
    std::vector<BindingLosses> runs{split};
    for (const analysis::Decomposition& again : in.largest_repeats) {
      runs.push_back(SplitLosses(in.reference, in.reference_estimated, again, excess));
    }
    split = PoolLosses(runs);
  }
  v.losses = split.losses;
  v.throughput_constraint = ThroughputConstraint(in.reference, o.waste_share);
  const BindingLoss* top = split.Top();
  if (n <= 1 || top == nullptr) {
    v.binding = Binding::kNone;  // one device, or nothing lost
  } else if (split.measured_reference) {
    // Near-linear scaling has nothing to bind, however large a cost one device already pays.
    v.binding = eff >= o.none_efficiency ? Binding::kNone : top->binding;
  } else {
    // One replica count: the wait that dominates, when it is a sizeable part of the step.
    v.binding = top->seconds >= (1 - o.none_efficiency) * t ? top->binding : Binding::kNone;
  }
  // Candidates within the noise of each other: none of them can be named.
  if (top != nullptr && v.binding == top->binding) {
    for (const BindingLoss* l : split.Unresolved()) {
      v.candidates.push_back({l->binding, l->estimate, l->DevicesEstimate(n, t)});
    }
    if (!v.candidates.empty()) v.binding = Binding::kInconclusive;
  }
  // The ablations tell input starvation and communication apart.
  const analysis::AblationCheck* nr = FindCheck(in.ablations, AblationCheckKind::kNoReduce);
  const analysis::AblationCheck* si = FindCheck(in.ablations, AblationCheckKind::kSyntheticInput);
  if (nr != nullptr && si != nullptr && v.binding == Binding::kInconclusive &&
      v.candidates.size() == 2 && Has(v.candidates, Binding::kCommunication) &&
      Has(v.candidates, Binding::kInput)) {
    const bool input = si->measured > o.override_ratio * nr->measured;
    const bool comm = nr->measured > o.override_ratio * si->measured;
    if (input || comm) {
      v.binding = input ? Binding::kInput : Binding::kCommunication;
      v.evidence.push_back(fmt::format(
          "communication and input lost devices within the noise of each other; the "
          "{} ablation saved {} per step against {} for {}: {} binds",
          input ? "synthetic-input" : "no-reduce", Ms(input ? si->measured : nr->measured),
          Ms(input ? nr->measured : si->measured), input ? "no-reduce" : "synthetic input",
          ToString(v.binding)));
      v.candidates.clear();
    }
  }
  // The no-reduce ablation tells communication and compute growth apart: growth it removes is
  // the reduction's doing; growth it leaves is compute's.
  const Seconds comm_s = split.Of(Binding::kCommunication).seconds;
  const Seconds compute_s = split.Of(Binding::kCompute).seconds;
  if (nr != nullptr && v.binding == Binding::kInconclusive && v.candidates.size() == 2 &&
      Has(v.candidates, Binding::kCommunication) && Has(v.candidates, Binding::kCompute)) {
    const Seconds moved_low = ComputeMovedByNoReduce(*nr, comm_s, compute_s, -1);
    const Seconds moved_high = ComputeMovedByNoReduce(*nr, comm_s, compute_s, +1);
    const bool comm = comm_s + moved_low > o.override_ratio * (compute_s - moved_low);
    const bool compute = compute_s - moved_high > o.override_ratio * (comm_s + moved_high);
    if (comm || compute) {
      v.binding = comm ? Binding::kCommunication : Binding::kCompute;
      const Seconds moved = comm ? moved_low : moved_high;
      v.evidence.push_back(fmt::format(
          "communication and compute lost devices within the noise of each other; removing the "
          "reduction cut the step by {} (noise {}) against {} of exposed communication: read at "
          "the {} end of its noise, {} of the {} compute growth went with the reduction (which "
          "competes with the compute), leaving communication {} against compute {}: {} binds",
          Ms(nr->measured), Ms(nr->noise), Ms(comm_s), comm ? "low" : "high", Ms(moved),
          Ms(compute_s), Ms(comm_s + moved), Ms(compute_s - moved), ToString(v.binding)));
      v.candidates.clear();
    }
  }
  // The emulation must have honoured the runs that decide the binding.
  std::string emulation_reason;
  if (in.emulation) {
    const double seg = in.emulation->SegmentShare();
    const double link = in.emulation->LinkShare();
    if (seg > o.max_unhonoured_share || link > o.max_unhonoured_share) {
      emulation_reason = fmt::format(
          "the emulation could not honour {} of the paced compute segments and {} of the link "
          "reductions of the runs that decide the binding (more than {}): the host was too "
          "slow or too busy for the emulated devices and links, so no cause is named",
          Pct(seg, 1), Pct(link, 1), Pct(o.max_unhonoured_share, 1));
      if (v.binding != Binding::kNone) {
        if (v.binding != Binding::kInconclusive && top != nullptr) {
          v.candidates = {{top->binding, top->estimate, top->DevicesEstimate(n, t)}};
        }
        v.binding = Binding::kInconclusive;
      }
      v.evidence.push_back(emulation_reason);
    }
  }
  if (nr != nullptr && si != nullptr) {
    if (v.binding == Binding::kCommunication && si->measured > o.override_ratio * nr->measured &&
        si->measured >= o.waste_share * t) {
      v.binding = Binding::kInput;
      v.evidence.push_back(fmt::format(
          "the synthetic-input ablation saved {} per step against {} for no-reduce: input, not "
          "communication, binds despite the decomposition",
          Ms(si->measured), Ms(nr->measured)));
    } else if (v.binding == Binding::kInput && nr->measured > o.override_ratio * si->measured &&
               nr->measured >= o.waste_share * t) {
      v.binding = Binding::kCommunication;
      v.evidence.push_back(
          fmt::format("the no-reduce ablation saved {} per step against {} for synthetic input: "
                      "communication, not input, binds despite the decomposition",
                      Ms(nr->measured), Ms(si->measured)));
    }
  }

  if (nr != nullptr && v.binding == Binding::kCompute && comm_s > 0) {
    const Seconds moved = ComputeMovedByNoReduce(*nr, comm_s, compute_s, -1);
    if (comm_s + moved > o.override_ratio * (compute_s - moved) &&
        nr->measured >= o.waste_share * t) {
      v.binding = Binding::kCommunication;
      v.evidence.push_back(fmt::format(
          "removing the reduction cut the step by {} (noise {}), {} more than the exposed "
          "communication: the compute growth goes with the reduction (it competes with the "
          "compute), so communication, not compute, binds despite the decomposition",
          Ms(nr->measured), Ms(nr->noise), Ms(nr->measured - comm_s)));
    }
  }

  // --- evidence ---
  if (last != nullptr) {
    v.evidence.insert(v.evidence.begin(),
                      fmt::format("at {} replicas: {:.1f} samples/s, efficiency {:.0f}%, step {}",
                                  n, x, 100 * eff, Ms(t)));
  }
  if (v.binding == Binding::kCommunication) {
    v.evidence.push_back(fmt::format(
        "exposed communication is {} of the {} step ({}): transfer {}, sync wait {}",
        Ms(c.exposed_comm), Ms(t), Pct(c.exposed_comm, t), Ms(c.transfer), Ms(c.sync_wait)));
    AddAblationEvidence(in.ablations, AblationCheckKind::kNoReduce, &v.evidence);
  } else if (v.binding == Binding::kInput) {
    v.evidence.push_back(fmt::format("input wait is {} of the {} step ({})", Ms(c.input_wait),
                                     Ms(t), Pct(c.input_wait, t)));
    AddAblationEvidence(in.ablations, AblationCheckKind::kSyntheticInput, &v.evidence);
  } else if (v.binding == Binding::kStragglers) {
    for (const std::string& e : in.skew.evidence) v.evidence.push_back(e);
    v.evidence.push_back(fmt::format("the straggler adds about {} per step ({} of the step)",
                                     Ms(excess), Pct(excess, t)));
    AddAblationEvidence(in.ablations, AblationCheckKind::kRankSpread, &v.evidence);
  } else if (v.binding == Binding::kImbalance) {
    v.evidence.push_back(fmt::format(
        "the job waits {} per step for whichever rank is slowest that step, {} of it not "
        "explained by a named straggler: work or speed varies across ranks",
        Ms(split.skew), Ms(split.Of(Binding::kImbalance).seconds)));
    for (const std::string& e : in.skew.evidence) v.evidence.push_back(e);
    AddAblationEvidence(in.ablations, AblationCheckKind::kRankSpread, &v.evidence);
  } else if (v.binding == Binding::kOverhead) {
    v.evidence.push_back(fmt::format("per-step overhead is {} of the {} step ({})", Ms(c.overhead),
                                     Ms(t), Pct(c.overhead, t)));
  } else if (v.binding == Binding::kInconclusive && !v.candidates.empty()) {
    v.evidence.push_back(fmt::format(
        "the candidates lost devices within the noise of each other (90% intervals): {}",
        CandidateWords(v.candidates)));
    v.evidence.push_back(SeparateAdvice(v.candidates, in.ablations));
  } else if (v.binding == Binding::kCompute) {
    v.evidence.push_back(fmt::format(
        "no waiting component is large (compute {} of the {} step): the lost throughput is "
        "compute that grew with the replica count",
        Pct(c.compute, t), Ms(t)));
  } else {
    v.evidence.push_back(
        fmt::format("compute is {} of the step; nothing else binds", Pct(c.compute, t)));
  }
  if (std::optional<std::string> e =
          ScriptCollectivesEvidence(in.largest, in.script_collectives, o.min_lever_gain)) {
    v.evidence.push_back(*e);
  }
  if (v.binding == Binding::kCommunication && excess > 0) {
    v.evidence.push_back(
        fmt::format("of the sync wait, about {} per step is waiting for straggler rank(s) {}",
                    Ms(excess), fmt::join(v.straggler_ranks, ",")));
  }
  // Where the lost devices went, and any other candidate that lost many too.
  if (n > 1 && t > 0) {
    std::vector<std::string> parts;
    for (const BindingLoss& l : v.losses) {
      if (l.devices > 0.005)
        parts.push_back(fmt::format("{} {}", ToString(l.binding), Fixed(l.devices, 2)));
    }
    if (!parts.empty()) {
      v.evidence.push_back(fmt::format("devices lost {} {} replicas: {}",
                                       split.measured_reference ? "between 1 and" : "to waits at",
                                       n, fmt::join(parts, ", ")));
    }
    for (const BindingLoss& l : v.losses) {
      if (l.binding != v.binding && l.seconds >= o.waste_share * t) {
        v.evidence.push_back(fmt::format("also large: {} ({} per step, {} of the step)",
                                         ToString(l.binding), Ms(l.seconds), Pct(l.seconds, t)));
      }
    }
  }
  if (v.throughput_constraint != Binding::kNone) {
    const analysis::Components& r = in.reference.job;
    const double cost = v.throughput_constraint == Binding::kInput ? r.input_wait : r.overhead;
    v.evidence.push_back(fmt::format(
        "throughput constraint: {} is {} of the step already at one replica ({}): a lever for "
        "every device, not a scaling loss",
        ToString(v.throughput_constraint), Pct(cost, r.step), Ms(cost)));
  }
  if (!in.ablations.checks.empty()) v.evidence.push_back(in.ablations.sentence);

  // --- levers, cheapest first ---
  auto add_lever = [&](Lever lever, std::string action, double new_x, std::string basis) {
    LeverAdvice l;
    l.lever = lever;
    l.action = std::move(action);
    l.expected_samples_per_s = new_x;
    l.expected_gain_samples_per_s = new_x - x;
    l.expected_efficiency = x1 > 0 ? new_x / (n * x1) : 0;
    l.basis = std::move(basis);
    if (x > 0 && l.expected_gain_samples_per_s >= o.min_lever_gain * x) v.levers.push_back(l);
  };
  auto x_at = [&](double step) { return step > 0 ? s / step : 0; };
  if (t > 0) {
    add_lever(Lever::kLoaderWorkersPrefetch, "add loader workers and deepen the prefetch queue",
              x_at(t - c.input_wait), fmt::format("input wait {} -> ~0", Ms(c.input_wait)));
    const double t2 = t + c.compute + c.input_wait;
    add_lever(Lever::kBiggerMicroBatch,
              "double the micro-batch, or accumulate gradients where activation memory binds",
              t2 > 0 ? 2 * s / t2 : 0,
              fmt::format("communication and overhead per sample halve ({} + {} per step)",
                          Ms(c.exposed_comm), Ms(c.overhead)));
    const double backward = c.backward > 0 ? c.backward : c.compute * 2.0 / 3.0;
    const double hidden = std::min(c.transfer, backward);
    add_lever(
        Lever::kOverlapBucketing,
        "overlap reduction with backward (smaller buckets, launched as they fill)",
        x_at(t - hidden),
        fmt::format("up to {} of transfer hidden behind {} of backward", Ms(hidden), Ms(backward)));
    if (o.script_comm_hook.empty()) {
      add_lever(Lever::kLowPrecisionReduction, "reduce gradients in bf16/fp16 (measure the loss)",
                x_at(t - c.transfer / 2), fmt::format("transfer {} halves", Ms(c.transfer)));
    } else {
      v.evidence.push_back(fmt::format(
          "the script reduces through its own communication hook ({}): its wire precision is "
          "the script's choice, not a lever stepscope applies",
          o.script_comm_hook));
    }
    if (v.binding == Binding::kImbalance) {
      const double imbalance = split.Of(Binding::kImbalance).seconds;
      add_lever(Lever::kBalanceLengths,
                "batch examples by length so ranks get similar work (train --balance-lengths)",
                x_at(t - imbalance), fmt::format("imbalance wait {} -> ~0", Ms(imbalance)));
    }
    if (!v.straggler_ranks.empty()) {
      // Ranks slowed in bursts point at their host (a co-tenant, throttling), not the device.
      bool bursts = true;
      for (int rank : v.straggler_ranks) {
        bool found = false;
        for (const analysis::RankSkew& r : in.skew.ranks) {
          if (r.rank == rank) found = true, bursts = bursts && analysis::Intermittent(r);
        }
        bursts = bursts && found;
      }
      const std::string ranks = fmt::format("{}", fmt::join(v.straggler_ranks, ","));
      add_lever(Lever::kRemoveStraggler,
                bursts ? fmt::format("find what shares rank(s) {}'s host in bursts (another "
                                     "process, a co-tenant's job, throttling) and stop it, or "
                                     "give the rank cores of its own",
                                     ranks)
                       : fmt::format("fix or exclude straggler rank(s) {}", ranks),
                x_at(t - excess), fmt::format("sync wait of {} -> ~0", Ms(excess)));
    }
  }
  double best_gain = 0;
  for (const LeverAdvice& l : v.levers)
    best_gain = std::max(best_gain, l.expected_gain_samples_per_s);

  // --- buy more devices? ---
  const bool has_curve = last != nullptr && (last->has_marginal || n == 1);
  const double marginal =
      (last != nullptr && last->has_marginal) ? last->marginal_device_value : eff;
  if (last == nullptr || in.points.size() == 1) {
    v.decision = Decision::kPullLevers;
    v.decision_reason = n == 1 ? "only one device measured: measure the scaling curve first"
                               : "only one replica count measured: measure the scaling curve "
                                 "first";
  } else if (x > 0 && best_gain >= o.levers_recover_a_lot * x) {
    v.decision = Decision::kPullLevers;
    v.decision_reason = fmt::format(
        "free levers are expected to recover up to {:.0f}% of throughput; pull them and "
        "re-measure before buying",
        100 * best_gain / x);
  } else if (has_curve && marginal >= o.near_linear_marginal) {
    v.decision = Decision::kBuyDevices;
    v.decision_reason = fmt::format(
        "the curve is still near-linear: the last added devices were worth {:.2f} devices each",
        marginal);
  } else {
    // Adding devices does not pay: spend where the loss is.
    v.decision = v.binding == Binding::kCommunication ? Decision::kUpgradeInterconnect
                 : v.binding == Binding::kCompute     ? Decision::kUpgradeDevices
                                                      : Decision::kStay;
    v.decision_reason = fmt::format(
        "the last added devices were worth only {:.2f} devices each and no free lever fixes it; "
        "spend on the {} constraint instead",
        marginal, ToString(v.binding));
  }

  // --- currency and costs ---
  v.currency = in.cost.deadline_hours ? Currency::kTime : Currency::kCost;
  if (in.cost.device_cost_per_hour) {
    const double price = *in.cost.device_cost_per_hour;
    for (size_t i = 0; i < in.points.size(); ++i) {
      const analysis::ScalingPoint& p = in.points[i];
      CostPoint cp;
      cp.replicas = p.replicas;
      if (p.samples_per_s > 0)
        cp.cost_per_million_samples = p.replicas * price / (p.samples_per_s * 3600) * 1e6;
      if (i > 0) {
        const double dx = p.samples_per_s - in.points[i - 1].samples_per_s;
        const double dn = p.replicas - in.points[i - 1].replicas;
        if (dx > 0) cp.marginal_cost_per_million_samples = dn * price / (dx * 3600) * 1e6;
      }
      v.costs.push_back(cp);
    }
  }
  if (in.cost.deadline_hours && in.cost.samples_to_target && *in.cost.deadline_hours > 0) {
    const double needed = *in.cost.samples_to_target / (*in.cost.deadline_hours * 3600);
    int meets = 0;
    for (const analysis::ScalingPoint& p : in.points) {
      if (p.samples_per_s >= needed) {
        meets = p.replicas;
        break;
      }
    }
    v.decision_reason += meets > 0 ? fmt::format(
                                         "; the deadline needs {:.1f} samples/s, met from {} "
                                         "replicas",
                                         needed, meets)
                                   : fmt::format(
                                         "; the deadline needs {:.1f} samples/s, not met by "
                                         "any measured point",
                                         needed);
  }

  // --- time to target quality ---
  if (in.noise.known) {
    const double b = in.noise.global_batch;
    const double bn = in.noise.b_noise;
    const double doubling = RelativeSampleCost(bn, b, 2 * b);
    v.quality_note = fmt::format(
        "samples/s is not time to target quality: the global batch B = {:.0f} against a noise "
        "scale B_noise ~ {:.0f}; {} (doubling B needs {:.2f}x the samples to reach the same loss)",
        b, bn,
        b < bn / 2   ? "a bigger global batch still cuts the steps almost proportionally"
        : b < 2 * bn ? "a bigger global batch is starting to cost extra samples"
                     : "a bigger global batch mostly adds samples, not progress",
        doubling);
  } else {
    v.quality_note = fmt::format(
        "samples/s is not time to target quality: a bigger global batch may need more samples "
        "to reach the same loss; the gradient noise scale is unknown ({})",
        in.noise.reason.empty() ? "no gradient norms recorded" : in.noise.reason);
  }

  // --- plain words ---
  std::string what;
  if (v.binding == Binding::kNone && v.throughput_constraint != Binding::kNone) {
    what = fmt::format(
        "The job scales well, but {} holds every device back already at one replica.",
        v.throughput_constraint == Binding::kInput ? "the input pipeline" : "per-step overhead");
  } else if (v.binding == Binding::kNone) {
    what = "The job scales well: nothing but the useful compute limits it.";
  } else if (v.binding == Binding::kInconclusive && !emulation_reason.empty()) {
    what = fmt::format("No binding constraint can be named: {}.", emulation_reason);
  } else if (v.binding == Binding::kInconclusive && !v.candidates.empty()) {
    what = fmt::format(
        "No single binding constraint can be named: {} lost devices within the noise of each "
        "other. {}",
        CandidateWords(v.candidates), SeparateAdvice(v.candidates, in.ablations));
  } else if (v.binding == Binding::kInconclusive) {
    what = "No binding constraint can be named from this evidence.";
  } else if (v.binding == Binding::kImbalance) {
    what = "Imbalance binds: a different rank is slowest each step and the others wait for it.";
  } else if (v.binding == Binding::kCompute) {
    what =
        "Compute itself got slower as replicas were added; no waiting component explains the "
        "loss.";
  } else if (v.binding == Binding::kCommunication) {
    what = fmt::format("Gradient communication binds: {} of each step waits for reductions.",
                       Pct(c.exposed_comm, t));
  } else if (v.binding == Binding::kInput) {
    what = fmt::format("The input pipeline binds: {} of each step waits for batches.",
                       Pct(c.input_wait, t));
  } else if (v.binding == Binding::kStragglers) {
    what = fmt::format("A slow rank binds: the others wait for rank(s) {} at every reduction.",
                       fmt::join(v.straggler_ranks, ","));
  } else {
    what = fmt::format("Fixed per-step overhead binds: {} of each step.", Pct(c.overhead, t));
  }
  const std::string lever_words = BestLeverWords(v.levers, x);
  v.situation =
      fmt::format("{} replicas deliver {:.2f} times one device ({:.0f}% efficiency). {} {}", n,
                  x1 > 0 ? x / x1 : 0.0, 100 * eff, what, lever_words);
  v.explanation = ExplainVerdict(v);
  return v;
}

std::string BestLeverWords(const std::vector<LeverAdvice>& levers, double x) {
  if (levers.empty()) return "No free lever is expected to gain much.";
  const bool by_goodput = std::all_of(levers.begin(), levers.end(), [](const LeverAdvice& l) {
    return l.expected_gain_goodput.has_value();
  });
  const LeverAdvice* best = &levers.front();
  for (const LeverAdvice& l : levers) {
    const bool better = by_goodput
                            ? *l.expected_gain_goodput > *best->expected_gain_goodput
                            : l.expected_gain_samples_per_s > best->expected_gain_samples_per_s;
    if (better) best = &l;
  }
  const double pct = x > 0 ? 100 * best->expected_gain_samples_per_s / x : 0.0;
  if (by_goodput) {
    return fmt::format(
        "The most promising free lever is to {} (about {:+.0f}% throughput, {:+.1f} samples/s "
        "of goodput).",
        best->action, pct, *best->expected_gain_goodput);
  }
  return fmt::format("The most promising free lever is to {} (about {:+.0f}% throughput).",
                     best->action, pct);
}

double LeverBaseSamplesPerS(const std::vector<LeverAdvice>& levers) {
  return levers.empty()
             ? 0.0
             : levers.back().expected_samples_per_s - levers.back().expected_gain_samples_per_s;
}

void RefreshLeverWords(const std::string& old_words, double x, Verdict* v) {
  if (const size_t at = v->situation.find(old_words); at != std::string::npos) {
    v->situation.replace(at, old_words.size(), BestLeverWords(v->levers, x));
  }
  v->explanation = ExplainVerdict(*v);
}

std::string ExplainVerdict(const Verdict& v) {
  return fmt::format("{} Decision: {}, because {}. The verdict optimises {}.", v.situation,
                     DecisionWords(v.decision), v.decision_reason, CurrencyWords(v.currency));
}

}  // namespace stepscope::decide
