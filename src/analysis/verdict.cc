#include "analysis/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text_format.h"

namespace stepscope::analysis {
namespace {


const AblationCheck* FindCheck(const AblationReport& r, const std::string& name) {
  for (const AblationCheck& c : r.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Seconds per step the straggler ranks add: their compute (or time to their last arrival)
// above the other ranks' median.
double StragglerExcess(const SkewReport& skew) {
  double excess = 0;
  for (int rank : skew.straggler_ranks) {
    for (const RankSkew& r : skew.ranks) {
      if (r.rank != rank) continue;
      const double compute_median = r.compute_mean / (1 + r.compute_excess);
      const double arrival_median = r.pre_arrival_mean / (1 + r.arrival_excess);
      excess =
          std::max({excess, r.compute_mean - compute_median, r.pre_arrival_mean - arrival_median});
    }
  }
  return excess;
}

void AddAblationEvidence(const AblationReport& ablations, const std::string& name,
                         std::vector<std::string>* evidence) {
  const AblationCheck* c = FindCheck(ablations, name);
  if (c == nullptr) {
    evidence->push_back(fmt::format("no {} ablation was run to confirm it", name));
  } else {
    evidence->push_back(fmt::format("{} ablation {}: {}", name,
                                    c->agrees ? "confirms" : "does not confirm", c->sentence));
  }
}

}  // namespace

Verdict DecideVerdict(const VerdictInputs& in, const VerdictOptions& o) {
  Verdict v;
  const Components& c = in.largest.job;
  const double t = c.step;
  const double s = in.largest.samples_per_step;
  const double x = in.largest.samples_per_s;
  const int n = in.largest.replicas;
  const ScalingPoint* last = in.points.empty() ? nullptr : &in.points.back();
  const double eff = last != nullptr ? last->efficiency : 1.0;
  const double x1 =
      (last != nullptr && last->speedup > 0) ? last->samples_per_s / last->speedup : 0;
  const double excess = StragglerExcess(in.skew);
  v.straggler_ranks = in.skew.straggler_ranks;

  // --- binding constraint ---
  const std::vector<std::pair<std::string, double>> scores = {
      {"stragglers", excess},
      {"communication", c.transfer + std::max(0.0, c.sync_wait - excess)},
      {"input", c.input_wait},
      {"overhead", std::max(0.0, c.overhead)},
  };
  auto top = std::max_element(scores.begin(), scores.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; });
  const double share = t > 0 ? top->second / t : 0;
  auto score = [&](const std::string& name) {
    for (const auto& [k, val] : scores) {
      if (k == name) return val;
    }
    return 0.0;
  };
  if (eff >= o.none_efficiency) {
    // Near-linear: only what also holds back one device (input, a slow rank) still binds.
    if (score("input") >= o.waste_share * t && top->first == "input") {
      v.binding = "input";
    } else if (!v.straggler_ranks.empty() && excess >= o.waste_share * t) {
      v.binding = "stragglers";
    } else {
      v.binding = "none";
    }
  } else if (share >= o.waste_share / 3) {
    v.binding = top->first;
  } else {
    v.binding = "compute";
  }
  // The ablations tell input starvation and communication apart.
  const AblationCheck* nr = FindCheck(in.ablations, "no_reduce");
  const AblationCheck* si = FindCheck(in.ablations, "synthetic_input");
  if (nr != nullptr && si != nullptr) {
    if (v.binding == "communication" && si->measured > o.override_ratio * nr->measured &&
        si->measured >= o.waste_share * t) {
      v.binding = "input";
      v.evidence.push_back(fmt::format(
          "the synthetic-input ablation saved {} per step against {} for no-reduce: input, not "
          "communication, binds despite the decomposition",
          Ms(si->measured), Ms(nr->measured)));
    } else if (v.binding == "input" && nr->measured > o.override_ratio * si->measured &&
               nr->measured >= o.waste_share * t) {
      v.binding = "communication";
      v.evidence.push_back(
          fmt::format("the no-reduce ablation saved {} per step against {} for synthetic input: "
                      "communication, not input, binds despite the decomposition",
                      Ms(nr->measured), Ms(si->measured)));
    }
  }

  // --- evidence ---
  if (last != nullptr) {
    v.evidence.insert(v.evidence.begin(),
                      fmt::format("at {} replicas: {:.1f} samples/s, efficiency {:.0f}%, step {}",
                                  n, x, 100 * eff, Ms(t)));
  }
  if (v.binding == "communication") {
    v.evidence.push_back(fmt::format(
        "exposed communication is {} of the {} step ({}): transfer {}, sync wait {}",
        Ms(c.exposed_comm), Ms(t), Pct(c.exposed_comm, t), Ms(c.transfer), Ms(c.sync_wait)));
    AddAblationEvidence(in.ablations, "no_reduce", &v.evidence);
  } else if (v.binding == "input") {
    v.evidence.push_back(fmt::format("input wait is {} of the {} step ({})", Ms(c.input_wait),
                                     Ms(t), Pct(c.input_wait, t)));
    AddAblationEvidence(in.ablations, "synthetic_input", &v.evidence);
  } else if (v.binding == "stragglers") {
    for (const std::string& e : in.skew.evidence) v.evidence.push_back(e);
    v.evidence.push_back(fmt::format("the straggler adds about {} per step ({} of the step)",
                                     Ms(excess), Pct(excess, t)));
    AddAblationEvidence(in.ablations, "rank_spread", &v.evidence);
  } else if (v.binding == "overhead") {
    v.evidence.push_back(fmt::format("per-step overhead is {} of the {} step ({})", Ms(c.overhead),
                                     Ms(t), Pct(c.overhead, t)));
  } else if (v.binding == "compute") {
    v.evidence.push_back(fmt::format(
        "no waiting component is large (compute {} of the {} step): the lost throughput is "
        "compute that grew with the replica count",
        Pct(c.compute, t), Ms(t)));
  } else {
    v.evidence.push_back(
        fmt::format("compute is {} of the step; nothing else binds", Pct(c.compute, t)));
  }
  if (v.binding == "communication" && excess > 0) {
    v.evidence.push_back(
        fmt::format("of the sync wait, about {} per step is waiting for straggler rank(s) {}",
                    Ms(excess), fmt::join(v.straggler_ranks, ",")));
  }
  // Any other waiting component that is large too.
  for (const auto& [name, value] : scores) {
    if (name != v.binding && t > 0 && value >= o.waste_share * t) {
      v.evidence.push_back(fmt::format("also large: {} ({} per step, {} of the step)", name,
                                       Ms(value), Pct(value, t)));
    }
  }
  if (!in.ablations.checks.empty()) v.evidence.push_back(in.ablations.sentence);

  // --- levers, cheapest first ---
  auto add_lever = [&](std::string name, std::string action, double new_x, std::string basis) {
    Lever l;
    l.name = std::move(name);
    l.action = std::move(action);
    l.expected_samples_per_s = new_x;
    l.expected_gain_samples_per_s = new_x - x;
    l.expected_efficiency = x1 > 0 ? new_x / (n * x1) : 0;
    l.basis = std::move(basis);
    if (x > 0 && l.expected_gain_samples_per_s >= o.min_lever_gain * x) v.levers.push_back(l);
  };
  auto x_at = [&](double step) { return step > 0 ? s / step : 0; };
  if (t > 0) {
    add_lever("loader_workers_prefetch", "more loader workers and a deeper prefetch queue",
              x_at(t - c.input_wait), fmt::format("input wait {} -> ~0", Ms(c.input_wait)));
    const double t2 = t + c.compute + c.input_wait;
    add_lever("bigger_micro_batch",
              "double the micro-batch, or accumulate gradients where activation memory binds",
              t2 > 0 ? 2 * s / t2 : 0,
              fmt::format("communication and overhead per sample halve ({} + {} per step)",
                          Ms(c.exposed_comm), Ms(c.overhead)));
    const double backward = c.backward > 0 ? c.backward : c.compute * 2.0 / 3.0;
    const double hidden = std::min(c.transfer, backward);
    add_lever(
        "overlap_bucketing",
        "overlap reduction with backward (smaller buckets, launched as they fill)",
        x_at(t - hidden),
        fmt::format("up to {} of transfer hidden behind {} of backward", Ms(hidden), Ms(backward)));
    add_lever("low_precision_reduction", "reduce gradients in bf16/fp16 (measure the loss)",
              x_at(t - c.transfer / 2), fmt::format("transfer {} halves", Ms(c.transfer)));
    if (!v.straggler_ranks.empty()) {
      add_lever(
          "remove_straggler",
          fmt::format("fix or exclude straggler rank(s) {}", fmt::join(v.straggler_ranks, ",")),
          x_at(t - excess), fmt::format("sync wait of {} -> ~0", Ms(excess)));
    }
  }
  double best_gain = 0;
  for (const Lever& l : v.levers) best_gain = std::max(best_gain, l.expected_gain_samples_per_s);

  // --- buy more devices? ---
  const bool has_curve = last != nullptr && (last->has_marginal || n == 1);
  const double marginal =
      (last != nullptr && last->has_marginal) ? last->marginal_device_value : eff;
  if (last == nullptr || in.points.size() == 1) {
    v.buy_more_devices = "not yet";
    v.buy_reason = n == 1 ? "only one device measured: measure the scaling curve first"
                          : "only one replica count measured: measure the scaling curve first";
  } else if (x > 0 && best_gain >= o.levers_recover_a_lot * x) {
    v.buy_more_devices = "not yet";
    v.buy_reason = fmt::format(
        "free levers are expected to recover up to {:.0f}% of throughput; pull them and "
        "re-measure before buying",
        100 * best_gain / x);
  } else if (has_curve && marginal >= o.near_linear_marginal) {
    v.buy_more_devices = "yes";
    v.buy_reason = fmt::format(
        "the curve is still near-linear: the last added devices were worth {:.2f} devices each",
        marginal);
  } else {
    v.buy_more_devices = "no";
    v.buy_reason = fmt::format(
        "the last added devices were worth only {:.2f} devices each and no free lever fixes it; "
        "spend on the {} constraint instead",
        marginal, v.binding);
  }

  // --- currency and costs ---
  v.currency = in.cost.deadline_hours ? "wall clock to a deadline" : "cost per sample";
  if (in.cost.device_cost_per_hour) {
    const double price = *in.cost.device_cost_per_hour;
    for (size_t i = 0; i < in.points.size(); ++i) {
      const ScalingPoint& p = in.points[i];
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
    for (const ScalingPoint& p : in.points) {
      if (p.samples_per_s >= needed) {
        meets = p.replicas;
        break;
      }
    }
    v.buy_reason += meets > 0 ? fmt::format(
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
  if (v.binding == "none") {
    what = "The job scales well: nothing but the useful compute limits it.";
  } else if (v.binding == "compute") {
    what =
        "Compute itself got slower as replicas were added; no waiting component explains the "
        "loss.";
  } else if (v.binding == "communication") {
    what = fmt::format("Gradient communication binds: {} of each step waits for reductions.",
                       Pct(c.exposed_comm, t));
  } else if (v.binding == "input") {
    what = fmt::format("The input pipeline binds: {} of each step waits for batches.",
                       Pct(c.input_wait, t));
  } else if (v.binding == "stragglers") {
    what = fmt::format("A slow rank binds: the others wait for rank(s) {} at every reduction.",
                       fmt::join(v.straggler_ranks, ","));
  } else {
    what = fmt::format("Fixed per-step overhead binds: {} of each step.", Pct(c.overhead, t));
  }
  std::string lever_words = "No free lever is expected to gain much.";
  if (!v.levers.empty()) {
    const Lever* best = &v.levers.front();
    for (const Lever& l : v.levers) {
      if (l.expected_gain_samples_per_s > best->expected_gain_samples_per_s) best = &l;
    }
    lever_words =
        fmt::format("The most promising free lever is to {} (about {:+.0f}% throughput).",
                    best->action, x > 0 ? 100 * best->expected_gain_samples_per_s / x : 0.0);
  }
  v.explanation = fmt::format(
      "{} replicas deliver {:.2f} times one device ({:.0f}% efficiency). {} {} Buy more devices: "
      "{}, because {}. The verdict optimises {}.",
      n, x1 > 0 ? x / x1 : 0.0, 100 * eff, what, lever_words, v.buy_more_devices, v.buy_reason,
      v.currency);
  return v;
}

}  // namespace stepscope::analysis
