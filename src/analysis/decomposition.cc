#include "analysis/decomposition.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace stepscope::analysis {

Components operator+(const Components& a, const Components& b) {
  Components c;
  c.step = a.step + b.step;
  c.compute = a.compute + b.compute;
  c.input_wait = a.input_wait + b.input_wait;
  c.exposed_comm = a.exposed_comm + b.exposed_comm;
  c.sync_wait = a.sync_wait + b.sync_wait;
  c.transfer = a.transfer + b.transfer;
  c.overhead = a.overhead + b.overhead;
  c.backward = a.backward + b.backward;
  c.comm_busy = a.comm_busy + b.comm_busy;
  c.script_comm = a.script_comm + b.script_comm;
  return c;
}

Seconds Of(const Components& c, Component which) {
  switch (which) {
    case Component::kCompute:
      return c.compute;
    case Component::kInputWait:
      return c.input_wait;
    case Component::kSyncWait:
      return c.sync_wait;
    case Component::kTransfer:
      return c.transfer;
    case Component::kOverhead:
      return c.overhead;
    case Component::kResidual:
      return 0;
  }
  return 0;
}

Components operator*(const Components& a, double k) {
  Components c;
  c.step = a.step * k;
  c.compute = a.compute * k;
  c.input_wait = a.input_wait * k;
  c.exposed_comm = a.exposed_comm * k;
  c.sync_wait = a.sync_wait * k;
  c.transfer = a.transfer * k;
  c.overhead = a.overhead * k;
  c.backward = a.backward * k;
  c.comm_busy = a.comm_busy * k;
  c.script_comm = a.script_comm * k;
  return c;
}

namespace {

// Throughput with its interval from the job's step times. Blocks of about sqrt(steps) steps keep
// the step-to-step correlation (a slow phase spans several steps) inside each resample.
Estimate ThroughputEstimate(const std::vector<double>& job_steps, double samples_per_step,
                            Estimate* step_estimate) {
  BootstrapOptions options;
  options.block = std::max(1, static_cast<int>(std::lround(std::sqrt(job_steps.size()))));
  const Estimate step = BootstrapMean(job_steps, options);
  *step_estimate = step;
  auto rate = [&](double s) { return s > 0 ? samples_per_step / s : 0.0; };
  return {rate(step.value), rate(step.high), rate(step.low)};
}

}  // namespace

std::vector<CollectiveSplit> SplitExposed(const StepRecord& record,
                                          const std::map<int, Seconds>& last_arrival) {
  // The rank's wait for late ranks is exposed only after its own last arrival a (its backward
  // has ended by then), and lasts at most its exposed communication: the window [a, a + exposed].
  // Walking the collectives in launch order along that window, collective k waits for arrivals
  // until its latest arrival last(k), and then moves bytes until it ends on this rank; only the
  // first is sync wait. A reduction still in flight when the next late rank arrives is transfer.
  std::vector<const CollectiveRecord*> taking_part;
  Seconds own_last = 0;
  for (const CollectiveRecord& c : record.collectives) {
    if (last_arrival.find(c.index) == last_arrival.end()) continue;
    own_last = taking_part.empty() ? c.ready : std::max(own_last, c.ready);
    taking_part.push_back(&c);
  }
  std::vector<CollectiveSplit> splits;
  if (taking_part.empty()) return splits;
  std::stable_sort(
      taking_part.begin(), taking_part.end(),
      [](const CollectiveRecord* a, const CollectiveRecord* b) { return a->index < b->index; });
  const Seconds exposed = std::max<Seconds>(0, record.exposed_comm);
  const Seconds window_end = own_last + exposed;
  Seconds cursor = own_last;  // how far along the window the walk has come
  for (const CollectiveRecord* c : taking_part) {
    CollectiveSplit split;
    split.index = c->index;
    const Seconds arrivals_done = std::min(last_arrival.at(c->index), window_end);
    if (arrivals_done > cursor) {
      split.sync_wait = arrivals_done - cursor;
      cursor = arrivals_done;
    }
    const Seconds moved_to = std::max(cursor, std::min(c->end, window_end));
    split.transfer = moved_to - cursor;
    cursor = moved_to;
    splits.push_back(split);
  }
  // Exposed time the walk did not reach (the rank's bookkeeping after its last collective ended)
  // is transfer of the last collective, as the step totals count it.
  splits.back().transfer += window_end - cursor;
  return splits;
}

Seconds SyncWait(const StepRecord& record, const std::map<int, Seconds>& last_arrival) {
  Seconds wait = 0;
  for (const CollectiveSplit& s : SplitExposed(record, last_arrival)) wait += s.sync_wait;
  return wait;
}

namespace {

// One rank's step split into components, given its exposed communication split per collective.
Components ComponentsOf(const StepRecord& record, const std::vector<CollectiveSplit>& splits) {
  Seconds sync_wait = 0;
  for (const CollectiveSplit& s : splits) sync_wait += s.sync_wait;
  Components c;
  c.step = record.step_time();
  c.compute = record.compute;
  c.input_wait = record.input_wait;
  c.exposed_comm = record.exposed_comm;
  c.sync_wait = sync_wait;
  c.transfer = record.exposed_comm - c.sync_wait;
  c.overhead = record.overhead();
  c.backward = record.backward;
  c.comm_busy = record.comm_busy;
  c.script_comm = std::min(record.script_comm.value_or(0), std::max(0.0, c.overhead));
  return c;
}

}  // namespace

Components StepComponents(const StepRecord& record, const std::map<int, Seconds>& last_arrival) {
  return ComponentsOf(record, SplitExposed(record, last_arrival));
}

namespace {

// A non-finite time would poison every mean silently: refuse it, naming where it is.
Status CheckFinite(const StepRecord& r) {
  const std::pair<const char*, double> fields[] = {
      {"start", r.start},         {"end", r.end},           {"input_wait", r.input_wait},
      {"compute", r.compute},     {"backward", r.backward}, {"exposed_comm", r.exposed_comm},
      {"comm_busy", r.comm_busy},
  };
  for (const auto& [name, value] : fields) {
    if (!std::isfinite(value)) {
      return Status::Error(
          fmt::format("rank {} step {}: field '{}' is not a finite number", r.rank, r.step, name));
    }
  }
  for (const CollectiveRecord& c : r.collectives) {
    if (!std::isfinite(c.ready)) {
      return Status::Error(fmt::format(
          "rank {} step {}: collective {} has a non-finite 'ready' time", r.rank, r.step, c.index));
    }
  }
  return Status::Ok();
}

bool HasNegativeDuration(const StepRecord& r) {
  // A small negative overhead is rounding; a large one means the parts exceed the step.
  const double slack = 1e-6 + 1e-3 * std::abs(r.step_time());
  return r.step_time() < 0 || r.input_wait < 0 || r.compute < 0 || r.exposed_comm < 0 ||
         r.overhead() < -slack;
}

// One step's contribution to RankDecomposition::work_lead: when every rank took part in this
// step's collectives and (`consecutive`) ended one in the previous step, each rank's work since
// then up to its last arrival, and its lead on the rank with the most. Then records where each
// rank's last collective of this step ended, for the next step.
void AddWorkLeads(const std::vector<const StepRecord*>& row, const std::map<int, Seconds>& last,
                  bool consecutive, std::vector<Seconds>* previous_end,
                  std::vector<Seconds>* lead_sum, int64_t* lead_steps) {
  const size_t n = row.size();
  std::vector<Seconds> arrival(n, -1), end(n, -1);
  for (size_t r = 0; r < n; ++r) {
    for (const CollectiveRecord& c : row[r]->collectives) {
      if (last.find(c.index) == last.end()) continue;
      arrival[r] = std::max(arrival[r], c.ready);
      end[r] = std::max(end[r], c.end);
    }
  }
  const bool complete =
      consecutive && !last.empty() &&
      std::none_of(arrival.begin(), arrival.end(), [](Seconds a) { return a < 0; }) &&
      std::none_of(previous_end->begin(), previous_end->end(), [](Seconds e) { return e < 0; });
  if (complete) {
    std::vector<Seconds> work(n);
    for (size_t r = 0; r < n; ++r) work[r] = arrival[r] - (*previous_end)[r];
    const Seconds most = *std::max_element(work.begin(), work.end());
    for (size_t r = 0; r < n; ++r) (*lead_sum)[r] += most - work[r];
    ++*lead_steps;
  }
  *previous_end = end;
}

}  // namespace

Result<MatchedSteps> MatchSteps(const std::vector<StepRecord>& records) {
  if (records.empty()) return Status::Error("no step records to analyse (is the run empty?)");
  std::map<int, std::map<int64_t, const StepRecord*>> by_rank;
  int64_t warmup = 0;
  int64_t negative = 0;
  std::string first_negative;
  for (const StepRecord& r : records) {
    STEPSCOPE_RETURN_IF_ERROR(CheckFinite(r));
    if (r.warmup) {
      ++warmup;
      continue;
    }
    if (HasNegativeDuration(r)) {
      if (negative++ == 0) first_negative = fmt::format("rank {} step {}", r.rank, r.step);
    }
    auto [it, inserted] = by_rank[r.rank].emplace(r.step, &r);
    if (!inserted) {
      return Status::Error(
          fmt::format("rank {} reports step {} twice (are records of two runs mixed together?)",
                      r.rank, r.step));
    }
  }
  if (by_rank.empty()) {
    return Status::Error(fmt::format(
        "all {} step records are warm-up steps; run more steps than the warm-up", warmup));
  }
  MatchedSteps out;
  if (negative > 0) {
    out.warnings.push_back(fmt::format(
        "{} record(s), first {}, have a negative duration or parts (input wait, compute, "
        "exposed communication) longer than the step; overhead comes out negative there",
        negative, first_negative));
  }
  std::set<int64_t> all_steps;
  for (const auto& [rank, steps] : by_rank) {
    out.ranks.push_back(rank);
    for (const auto& [step, rec] : steps) all_steps.insert(step);
  }
  int64_t dropped = 0;
  for (int64_t step : all_steps) {
    std::vector<const StepRecord*> row;
    std::vector<int> missing;
    for (const auto& [rank, steps] : by_rank) {
      auto it = steps.find(step);
      if (it == steps.end()) {
        missing.push_back(rank);
      } else {
        row.push_back(it->second);
      }
    }
    if (!missing.empty()) {
      ++dropped;
      if (dropped <= 5) {
        out.warnings.push_back(fmt::format("step {} is missing on rank(s) {}; step dropped", step,
                                           fmt::join(missing, ",")));
      }
      continue;
    }
    out.step_numbers.push_back(step);
    out.steps.push_back(std::move(row));
  }
  if (dropped > 5) {
    out.warnings.push_back(
        fmt::format("{} steps in all were missing on some rank and were dropped", dropped));
  }
  if (out.steps.empty()) {
    return Status::Error(fmt::format(
        "no step is present on all {} ranks; cannot match steps across ranks", out.ranks.size()));
  }
  return out;
}

std::map<int, Seconds> LastArrivals(const std::vector<const StepRecord*>& step) {
  std::map<int, Seconds> last;
  std::map<int, size_t> count;
  for (const StepRecord* r : step) {
    std::set<int> seen;
    for (const CollectiveRecord& c : r->collectives) {
      if (!seen.insert(c.index).second) continue;  // a duplicate index counts once per rank
      auto it = last.find(c.index);
      if (it == last.end()) {
        last[c.index] = c.ready;
      } else {
        it->second = std::max(it->second, c.ready);
      }
      ++count[c.index];
    }
  }
  for (auto it = last.begin(); it != last.end();) {
    it = count[it->first] == step.size() ? std::next(it) : last.erase(it);
  }
  return last;
}

size_t CriticalRank(const std::vector<const StepRecord*>& step,
                    const std::map<int, Seconds>& last_arrival) {
  size_t critical = 0;
  if (last_arrival.empty()) {
    for (size_t r = 1; r < step.size(); ++r) {
      if (step[r]->step_time() > step[critical]->step_time()) critical = r;
    }
    return critical;
  }
  // The step's last collective: the latest latest-arrival (the later index on a tie).
  int last_k = last_arrival.begin()->first;
  for (const auto& [k, t] : last_arrival) {
    if (t >= last_arrival.at(last_k)) last_k = k;
  }
  Seconds latest = 0;
  bool found = false;
  for (size_t r = 0; r < step.size(); ++r) {
    for (const CollectiveRecord& c : step[r]->collectives) {
      if (c.index != last_k) continue;
      if (!found || c.ready > latest) {
        latest = c.ready;
        critical = r;
        found = true;
      }
      break;
    }
  }
  return critical;
}

void FitToJobStep(Seconds job_step, Components* c) {
  Seconds excess = c->step - job_step;
  c->step = job_step;
  if (excess <= 0) {
    c->overhead -= excess;
  } else {
    // The critical rank began the step before the job did: the beginning of its step (its wait
    // for a batch, then its compute) ran while the job was still finishing the previous step.
    // Time outside every phase goes before that; communication only when the critical rank's
    // step was mostly communication (wait first).
    for (Seconds* part : {&c->input_wait, &c->overhead, &c->compute, &c->sync_wait, &c->transfer}) {
      const Seconds taken = std::min(excess, std::max(0.0, *part));
      *part -= taken;
      excess -= taken;
    }
    c->backward = std::min(c->backward, c->compute);
    c->exposed_comm = c->sync_wait + c->transfer;
  }
  c->script_comm = std::min(c->script_comm, std::max(0.0, c->overhead));
}

Result<Decomposition> Decompose(const std::vector<StepRecord>& records) {
  Result<MatchedSteps> matched = MatchSteps(records);
  if (!matched.ok()) return matched.status();
  const MatchedSteps& m = *matched;
  const size_t nranks = m.ranks.size();
  const size_t nsteps = m.steps.size();

  Decomposition d;
  d.replicas = static_cast<int>(nranks);
  d.steps = static_cast<int64_t>(nsteps);
  d.warnings = m.warnings;
  std::vector<Components> rank_sum(nranks);
  std::vector<std::vector<double>> rank_steps(nranks);
  std::vector<double> rank_samples(nranks, 0);
  std::vector<double> job_steps;
  Components job_sum;
  std::map<int, CollectiveSplit> collective_sum;
  d.ranks_per_step.assign(nranks, {});
  // RankDecomposition::work_lead: per rank, the end of its last collective in the previous
  // matched step (-1: none), the leads summed, and the steps they cover.
  std::vector<Seconds> previous_end(nranks, -1), lead_sum(nranks, 0), queued(nranks, 0);
  int64_t lead_steps = 0;
  int64_t previous_step = -2;
  double samples_sum = 0;
  for (size_t i = 0; i < nsteps; ++i) {
    const auto& row = m.steps[i];
    const std::map<int, Seconds> last = LastArrivals(row);
    AddWorkLeads(row, last, m.step_numbers[i] == previous_step + 1, &previous_end, &lead_sum,
                 &lead_steps);
    previous_step = m.step_numbers[i];
    const size_t critical = CriticalRank(row, last);
    std::vector<std::vector<CollectiveSplit>> splits(nranks);
    Components critical_c;
    Seconds latest_start = 0, latest_end = 0;
    for (size_t r = 0; r < nranks; ++r) {
      splits[r] = SplitExposed(*row[r], last);
      const Components c = ComponentsOf(*row[r], splits[r]);
      rank_sum[r] = rank_sum[r] + c;
      rank_steps[r].push_back(c.step);
      rank_samples[r] += static_cast<double>(row[r]->samples);
      samples_sum += static_cast<double>(row[r]->samples);
      d.ranks_per_step[r].push_back(c);
      if (r == critical) critical_c = c;
      latest_start = r == 0 ? row[r]->start : std::max(latest_start, row[r]->start);
      latest_end = r == 0 ? row[r]->end : std::max(latest_end, row[r]->end);
      for (size_t k = 0; k + 1 < splits[r].size(); ++k) queued[r] += splits[r][k].transfer;
    }
    for (const CollectiveSplit& split : splits[critical]) {
      collective_sum[split.index].sync_wait += split.sync_wait;
      collective_sum[split.index].transfer += split.transfer;
    }
    // The job's step runs from the moment its last rank began it to the moment its last rank
    // finished it (docs/metrics.md "The job's step"); FitToJobStep says where the critical rank's
    // own step differs.
    const Seconds job_step = std::max(0.0, latest_end - latest_start);
    FitToJobStep(job_step, &critical_c);
    job_sum = job_sum + critical_c;
    job_steps.push_back(job_step);
    d.job_per_step.push_back(critical_c);
  }
  const double inv = 1.0 / static_cast<double>(nsteps);
  d.job = job_sum * inv;
  for (auto& [index, split] : collective_sum) {
    d.job_collectives.push_back({index, split.sync_wait * inv, split.transfer * inv});
  }
  d.step_p50 = Percentile(job_steps, 50);
  d.step_p90 = Percentile(job_steps, 90);
  d.samples_per_step = samples_sum * inv;
  d.samples_per_s = d.job.step > 0 ? d.samples_per_step / d.job.step : 0;
  d.throughput = ThroughputEstimate(job_steps, d.samples_per_step, &d.step_estimate);
  if (d.job.step <= 0) {
    d.warnings.push_back("mean job step time is not positive; throughput reported as 0");
  }
  for (size_t r = 0; r < nranks; ++r) {
    RankDecomposition rd;
    rd.rank = m.ranks[r];
    rd.mean = rank_sum[r] * inv;
    rd.step_p50 = Percentile(rank_steps[r], 50);
    rd.step_p90 = Percentile(rank_steps[r], 90);
    rd.samples_per_step = rank_samples[r] * inv;
    if (lead_steps > 0) rd.work_lead = lead_sum[r] / static_cast<double>(lead_steps);
    rd.queued_transfer = queued[r] * inv;
    d.ranks.push_back(rd);
  }
  return d;
}

}  // namespace stepscope::analysis
