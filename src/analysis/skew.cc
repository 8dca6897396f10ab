#include "analysis/skew.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "analysis/decomposition.h"
#include "core/statistics.h"

namespace stepscope::analysis {
bool Intermittent(const RankSkew& rank, const SkewOptions& options) {
  return rank.slow_steps < options.persistent_steps;
}

std::string StragglerKindWords(const RankSkew& rank, const SkewOptions& options) {
  std::string words =
      Intermittent(rank, options)
          ? fmt::format(
                "it is slow in only {:.0f}% of the steps, in bursts: a co-tenant or "
                "throttling on its host rather than a slower device",
                100 * rank.slow_steps)
          : fmt::format(
                "it is slow in {:.0f}% of the steps: a persistently slower rank (its "
                "device, its placement or its share of the work)",
                100 * rank.slow_steps);
  if (rank.cpu_wait_mean > 0) {
    words += fmt::format(" ({:.3f} ms of its compute per step waited for a CPU core)",
                         1e3 * rank.cpu_wait_mean);
  }
  return words;
}

Result<SkewReport> AnalyzeSkew(const std::vector<StepRecord>& records, const SkewOptions& options) {
  Result<MatchedSteps> matched = MatchSteps(records);
  if (!matched.ok()) return matched.status();
  const MatchedSteps& m = *matched;
  const size_t nranks = m.ranks.size();
  SkewReport out;
  out.replicas = static_cast<int>(nranks);

  std::vector<double> compute_sum(nranks, 0);
  std::vector<double> pre_arrival_sum(nranks, 0);
  std::vector<double> input_sum(nranks, 0);
  std::vector<double> cpu_wait_sum(nranks, 0);
  std::vector<double> step_sum(nranks, 0);
  std::vector<int64_t> last_count(nranks, 0);
  // Per rank: the wait it caused as the last to arrive (its lead over the second-to-last).
  std::vector<double> wait_caused(nranks, 0);
  std::map<int, std::vector<double>> per_collective;
  std::vector<double> all_skews;
  bool any_collective = false;
  for (const auto& row : m.steps) {
    for (size_t r = 0; r < nranks; ++r) {
      compute_sum[r] += row[r]->compute;
      input_sum[r] += row[r]->input_wait;
      cpu_wait_sum[r] += row[r]->cpu_wait.value_or(0);
      step_sum[r] += row[r]->end - row[r]->start;
    }
    const std::map<int, Seconds> last = LastArrivals(row);
    if (!last.empty()) any_collective = true;
    for (size_t r = 0; r < nranks; ++r) {
      Seconds own_last = row[r]->start;
      for (const CollectiveRecord& c : row[r]->collectives) {
        if (last.count(c.index)) own_last = std::max(own_last, c.ready);
      }
      pre_arrival_sum[r] += own_last - row[r]->start;
    }
    for (const auto& [index, latest] : last) {
      Seconds earliest = latest;
      Seconds second = -std::numeric_limits<double>::infinity();
      size_t last_rank = 0;
      int at_latest = 0;
      for (size_t r = 0; r < nranks; ++r) {
        for (const CollectiveRecord& c : row[r]->collectives) {
          if (c.index != index) continue;
          earliest = std::min(earliest, c.ready);
          if (c.ready == latest) {
            last_rank = r;
            ++at_latest;
          } else {
            second = std::max(second, c.ready);
          }
          break;
        }
      }
      if (nranks > 1 && at_latest == 1 && std::isfinite(second)) {
        wait_caused[last_rank] += latest - second;
      }
      const Seconds skew = latest - earliest;
      per_collective[index].push_back(skew);
      all_skews.push_back(skew);
      // An exact tie (or a single rank) names nobody.
      if (nranks > 1 && at_latest == 1) {
        ++last_count[last_rank];
        ++out.arrival_events;
      }
    }
  }
  if (!any_collective && nranks > 1) {
    // Without collectives, the rank that computed longest in a step is the one the others
    // would have waited for.
    out.by_steps = true;
    for (const auto& row : m.steps) {
      size_t worst = 0;
      for (size_t r = 1; r < nranks; ++r) {
        if (row[r]->compute > row[worst]->compute) worst = r;
      }
      int ties = 0;
      for (size_t r = 0; r < nranks; ++r) ties += row[r]->compute == row[worst]->compute;
      if (ties == 1) {
        ++last_count[worst];
        ++out.arrival_events;
        Seconds second = 0;
        for (size_t r = 0; r < nranks; ++r) {
          if (r != worst) second = std::max(second, row[r]->compute);
        }
        wait_caused[worst] += row[worst]->compute - second;
      }
    }
  }

  const double inv = 1.0 / static_cast<double>(m.steps.size());
  std::vector<double> means;
  for (size_t r = 0; r < nranks; ++r) means.push_back(compute_sum[r] * inv);
  const auto [mn, mx] = std::minmax_element(means.begin(), means.end());
  out.compute_spread = *mx - *mn;
  double mean = 0;
  for (double v : means) mean += v;
  mean /= static_cast<double>(nranks);
  double var = 0;
  for (double v : means) var += (v - mean) * (v - mean);
  var /= static_cast<double>(nranks);
  out.compute_cv = mean > 0 ? std::sqrt(var) / mean : 0;

  for (auto& [index, skews] : per_collective) {
    CollectiveSkew cs;
    cs.index = index;
    double s = 0;
    for (double v : skews) s += v;
    cs.mean = s / static_cast<double>(skews.size());
    cs.p90 = Percentile(skews, 90);
    out.collectives.push_back(cs);
  }
  if (!all_skews.empty()) {
    double s = 0;
    for (double v : all_skews) s += v;
    out.arrival_skew_mean = s / static_cast<double>(all_skews.size());
    out.arrival_skew_p90 = Percentile(all_skews, 90);
  }

  // Per step and rank: compute on a core, and the median of the other ranks' at that step.
  std::vector<std::vector<double>> typical_gap(nranks), typical_reference(nranks);
  for (const auto& row : m.steps) {
    if (nranks < 2) break;
    std::vector<double> on_cpu(nranks);
    for (size_t r = 0; r < nranks; ++r) on_cpu[r] = row[r]->compute_on_cpu();
    const std::vector<double> reference = MedianOfOthers(on_cpu);
    for (size_t r = 0; r < nranks; ++r) {
      typical_gap[r].push_back(on_cpu[r] - reference[r]);
      typical_reference[r].push_back(reference[r]);
    }
  }

  double all_waits = 0;
  for (double w : wait_caused) all_waits += w;
  for (size_t r = 0; r < nranks; ++r) {
    RankSkew rs;
    rs.rank = m.ranks[r];
    rs.compute_mean = means[r];
    rs.last_arrivals = last_count[r];
    rs.last_fraction = out.arrival_events > 0 ? static_cast<double>(last_count[r]) /
                                                    static_cast<double>(out.arrival_events)
                                              : 0;
    rs.wait_share = all_waits > 0 ? wait_caused[r] / all_waits : 0;
    std::vector<double> others, others_pre, others_input;
    for (size_t o = 0; o < nranks; ++o) {
      if (o == r) continue;
      others.push_back(means[o]);
      others_pre.push_back(pre_arrival_sum[o] * inv);
      others_input.push_back(input_sum[o] * inv);
    }
    rs.cpu_wait_mean = cpu_wait_sum[r] * inv;
    rs.typical_added = TrimmedMean(typical_gap[r]);
    const double typical_reference_mean = TrimmedMean(typical_reference[r]);
    rs.typical_excess = typical_reference_mean > 0 ? rs.typical_added / typical_reference_mean : 0;
    int slow = 0;
    for (size_t s = 0; s < typical_gap[r].size(); ++s) {
      if (typical_gap[r][s] > options.compute_margin * typical_reference[r][s]) ++slow;
    }
    rs.slow_steps = typical_gap[r].empty()
                        ? 0
                        : static_cast<double>(slow) / static_cast<double>(typical_gap[r].size());
    rs.input_wait_mean = input_sum[r] * inv;
    rs.others_input_wait = Median(others_input);
    const double med = Median(others);
    rs.compute_excess = (!others.empty() && med > 0) ? means[r] / med - 1 : 0;
    rs.pre_arrival_mean = pre_arrival_sum[r] * inv;
    const double med_pre = Median(others_pre);
    rs.arrival_excess =
        (!others_pre.empty() && med_pre > 0) ? rs.pre_arrival_mean / med_pre - 1 : 0;
    out.ranks.push_back(rs);
  }

  const std::string unit = out.by_steps ? "steps" : "collectives";
  for (size_t r = 0; r < out.ranks.size(); ++r) {
    const RankSkew& rs = out.ranks[r];
    if (nranks < 2 || out.arrival_events == 0) break;
    // Last in most of the events, or the cause of most of the waiting: a rank slowed in bursts
    // (a noisy co-tenant half the time) is last in its slow steps by far and, in the others,
    // as often as any rank.
    if (rs.last_fraction < options.last_fraction && rs.wait_share < options.last_fraction) {
      continue;
    }
    const double material = options.material_share * step_sum[r] * inv;
    const double compute_added = rs.compute_mean - rs.compute_mean / (1 + rs.compute_excess);
    const double lateness = rs.pre_arrival_mean - rs.pre_arrival_mean / (1 + rs.arrival_excess);
    if (rs.compute_excess >= options.compute_margin && compute_added < material &&
        (out.by_steps || rs.arrival_excess < options.compute_margin || lateness < material)) {
      out.evidence.push_back(fmt::format(
          "rank {} arrived last in {:.0f}% of the {} and computes {:.0f}% more than the others, "
          "but that is {:.3f} ms of a {:.2f} ms step: not called a straggler",
          rs.rank, 100 * rs.last_fraction, unit, 100 * rs.compute_excess, 1e3 * compute_added,
          1e3 * step_sum[r] * inv));
      continue;
    }
    const bool typical =
        rs.typical_excess >= options.compute_margin && rs.typical_added >= material;
    // (Unless it is also late by more than that excess, outside compute: the arrival test.)
    if (rs.compute_excess >= options.compute_margin && compute_added >= material && !typical &&
        (out.by_steps || lateness - compute_added < material)) {
      // More compute on average, but not in a typical step on a core: the excess is time spent
      // waiting for a CPU core, or a few disturbed steps.
      const bool core = rs.cpu_wait_mean >= 0.5 * compute_added;
      out.evidence.push_back(fmt::format(
          "rank {} arrived last in {:.0f}% of the {} and computes {:.0f}% more than the others "
          "on average ({:.3f} ms), but {}: in a typical step it computes {:.0f}% ({:.3f} ms) more "
          "than they do on a core, under the {:.0f}% margin or {:.0f}% of its step: not called a "
          "straggler",
          rs.rank, 100 * rs.last_fraction, unit, 100 * rs.compute_excess, 1e3 * compute_added,
          core ? fmt::format("{:.3f} ms of its compute is waiting for a CPU core (more threads "
                             "than cores on its host, or a co-tenant)",
                             1e3 * rs.cpu_wait_mean)
               : std::string("that comes from a few disturbed steps"),
          100 * rs.typical_excess, 1e3 * rs.typical_added, 100 * options.compute_margin,
          100 * options.material_share));
      continue;
    }
    if (rs.compute_excess >= options.compute_margin && compute_added >= material) {
      out.straggler_ranks.push_back(rs.rank);
      out.evidence.push_back(fmt::format(
          "rank {} arrived last in {} of {} {} ({:.0f}%), causing {:.0f}% of the waiting for the "
          "last rank, and its compute ({:.2f} ms) is {:.0f}% above the median of the other "
          "ranks; {}",
          rs.rank, rs.last_arrivals, out.arrival_events, unit, 100 * rs.last_fraction,
          100 * rs.wait_share, 1e3 * rs.compute_mean, 100 * rs.compute_excess,
          StragglerKindWords(rs, options)));
    } else if (!out.by_steps && rs.arrival_excess >= options.compute_margin &&
               rs.others_input_wait >= 0.5 * rs.pre_arrival_mean / (1 + rs.arrival_excess)) {
      // Every rank waits for input most of the time before it arrives: a rank later than the
      // others by its input wait is the input pipeline's phase, not a slow rank.
      out.evidence.push_back(fmt::format(
          "rank {} arrived last in {:.0f}% of the {} and reaches its last collective {:.0f}% "
          "later, but every rank spends most of that time waiting for input (the others' median "
          "{:.2f} ms): the input pipeline, not a straggler",
          rs.rank, 100 * rs.last_fraction, unit, 100 * rs.arrival_excess,
          1e3 * rs.others_input_wait));
    } else if (!out.by_steps && rs.arrival_excess >= options.compute_margin &&
               lateness >= material) {
      out.straggler_ranks.push_back(rs.rank);
      out.evidence.push_back(fmt::format(
          "rank {} arrived last in {} of {} {} ({:.0f}%) and reaches its last collective {:.0f}% "
          "later into the step than the other ranks' median ({:.2f} ms), though its compute is "
          "only {:.0f}% above theirs: it is slow outside measured compute (input, host, sleeps)",
          rs.rank, rs.last_arrivals, out.arrival_events, unit, 100 * rs.last_fraction,
          100 * rs.arrival_excess, 1e3 * rs.pre_arrival_mean, 100 * rs.compute_excess));
    } else {
      out.evidence.push_back(fmt::format(
          "rank {} arrived last in {:.0f}% of the {} but its compute and arrival are only "
          "{:.1f}% and {:.1f}% above the other ranks' median (margin {:.0f}%): not called a "
          "straggler",
          rs.rank, 100 * rs.last_fraction, unit, 100 * rs.compute_excess, 100 * rs.arrival_excess,
          100 * options.compute_margin));
    }
  }
  // Several slow ranks: only the slowest arrives last, so a further one is named by its steady
  // excess over the ranks not named (per step, the median compute on a core of the other ranks
  // that are not stragglers): the same margin as the first, on average and in at least
  // `last_fraction` of the steps. The named ranks are left out of the reference, as the others'
  // median leaves out the rank it judges: a reference that held them would be pulled up by the
  // slow ranks, one that took only the faster half would be pulled down by the jitter.
  if (!out.straggler_ranks.empty() && nranks >= 3) {
    const int slowest = out.straggler_ranks.front();
    auto named = [&out](int rank) {
      return std::find(out.straggler_ranks.begin(), out.straggler_ranks.end(), rank) !=
             out.straggler_ranks.end();
    };
    // The ranks are judged in order; once one is named, the ones after it are judged against
    // the ranks still not named.
    for (size_t from = 0; from < nranks;) {
      std::vector<size_t> candidates;  // the ranks not named, as indices into m.ranks
      for (size_t r = 0; r < nranks; ++r) {
        if (!named(m.ranks[r])) candidates.push_back(r);
      }
      if (candidates.size() < 2) break;  // no other rank left to judge against
      const size_t k = candidates.size();
      std::vector<int64_t> steady(k, 0);
      std::vector<double> own_sum(k, 0), reference_sum(k, 0);
      for (const auto& row : m.steps) {
        std::vector<double> on_cpu(k);
        for (size_t i = 0; i < k; ++i) on_cpu[i] = row[candidates[i]]->compute_on_cpu();
        const std::vector<double> reference = MedianOfOthers(on_cpu);
        for (size_t i = 0; i < k; ++i) {
          steady[i] += on_cpu[i] > reference[i] * (1 + options.compute_margin);
          own_sum[i] += on_cpu[i];
          reference_sum[i] += reference[i];
        }
      }
      size_t next = nranks;
      for (size_t i = 0; i < k && next == nranks; ++i) {
        const size_t r = candidates[i];
        if (r < from || reference_sum[i] <= 0) continue;
        const double excess = own_sum[i] / reference_sum[i] - 1;
        const double added = (own_sum[i] - reference_sum[i]) * inv;
        const double steady_fraction = static_cast<double>(steady[i]) * inv;
        const double material = options.material_share * step_sum[r] * inv;
        if (excess >= options.compute_margin && added >= material &&
            steady_fraction >= options.last_fraction) {
          out.straggler_ranks.push_back(m.ranks[r]);
          out.evidence.push_back(fmt::format(
              "rank {} computes {:.0f}% more on a core than the ranks not named ({:.2f} against "
              "{:.2f} ms), and more than the margin in {:.0f}% of the steps: a further "
              "straggler, hidden behind rank {} (it binds once that one is fixed)",
              m.ranks[r], 100 * excess, 1e3 * own_sum[i] * inv, 1e3 * reference_sum[i] * inv,
              100 * steady_fraction, slowest));
          next = r + 1;
        }
      }
      from = next;
    }
    std::sort(out.straggler_ranks.begin(), out.straggler_ranks.end());
  }
  if (out.straggler_ranks.empty() && out.evidence.empty()) {
    out.evidence.push_back(nranks < 2 ? "one rank: no cross-rank skew"
                                      : "no rank is consistently last with more compute");
  }
  return out;
}

}  // namespace stepscope::analysis
