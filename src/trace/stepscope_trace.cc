#include "trace/stepscope_trace.h"

#include <algorithm>
#include <charconv>
#include <iterator>

namespace stepscope::trace {
namespace {

// The number after `prefix` in `name` ("bucket 3 ready" -> 3), or -1.
int64_t NumberAfter(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return -1;
  int64_t n = -1;
  std::string_view rest = name.substr(prefix.size());
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
  return ec == std::errc() ? n : -1;
}

}  // namespace

void StepscopeTraceCollector::Visit(const TraceEvent& e) {
  if (e.cat.empty() && e.ph != 'i' && e.ph != 'I') return;
  if (!e.has_ts) return;
  if (e.ph == 'i' || e.ph == 'I') {
    int64_t k = NumberAfter(e.name, "bucket ");
    if (k >= 0 && e.name.size() > 6 && e.name.substr(e.name.size() - 6) == " ready") {
      ready_.push_back({e.ts, k});
    }
    return;
  }
  if (e.ph != 'X' || !e.has_dur || !(e.dur >= 0)) return;
  Interval iv{e.ts, e.ts + e.dur};
  const std::string_view cat = e.cat;
  if (cat == "step") {
    int64_t n = NumberAfter(e.name, "step ");
    if (n < 0) return;
    steps_.push_back({n, iv.begin, iv.end, e.samples, e.warmup});
    int64_t pid = e.pid_str.empty() ? e.pid : -1;
    rank_ = rank_ == -2 || rank_ == pid ? pid : -1;
  } else if (cat == "input") {
    input_.push_back(iv);
  } else if (cat == "compute") {
    compute_.push_back(iv);
    if (e.name == "backward") backward_starts_.push_back(iv.begin);
  } else if (cat == "comm_wait") {
    comm_wait_.push_back(iv);
  } else if (cat == "comm") {
    comm_.push_back(iv);
    collectives_.push_back(
        {e.step, NumberAfter(e.name, "all-reduce bucket "), e.bytes, iv.begin, iv.end});
  }
}

void StepscopeTraceCollector::Finish(ImportedTrace* out) {
  out->format = TraceFormat::kStepscopeTrace;
  out->steps_from = StepSource::kRecorded;
  out->clock = ClockKind::kAligned;
  const std::vector<Interval> compute = Union(std::move(compute_));
  const std::vector<Interval> input = Union(std::move(input_));
  const std::vector<Interval> wait = Union(std::move(comm_wait_));
  const std::vector<Interval> comm = Union(std::move(comm_));
  const std::vector<Interval> hidden = Intersect(comm, compute);
  std::sort(steps_.begin(), steps_.end(),
            [](const Step& a, const Step& b) { return a.step < b.step; });
  std::sort(ready_.begin(), ready_.end());
  std::sort(backward_starts_.begin(), backward_starts_.end());
  std::map<int64_t, size_t> index_of;
  for (const Step& m : steps_) {
    if (index_of.count(m.step)) {
      ++out->warnings;
      out->warning_messages.push_back(out->path + ": step " + std::to_string(m.step) +
                                      " appears twice; the first is kept");
      continue;
    }
    index_of[m.step] = out->steps.size();
    ImportedStep s;
    s.step = m.step;
    s.start = m.begin * 1e-6;
    s.end = m.end * 1e-6;
    s.samples = m.samples;
    s.warmup = m.warmup == 1;
    s.compute = MeasureWithin(compute, m.begin, m.end) * 1e-6;
    s.input_wait = MeasureWithin(input, m.begin, m.end) * 1e-6;
    s.exposed_comm = MeasureWithin(wait, m.begin, m.end) * 1e-6;
    s.comm_busy = MeasureWithin(comm, m.begin, m.end) * 1e-6;
    s.overlap = MeasureWithin(hidden, m.begin, m.end) * 1e-6;
    s.idle = std::max(0.0, s.step_time() - s.compute - s.input_wait - s.exposed_comm);
    // The step's last backward pass: with gradient accumulation, the one whose buckets are
    // reduced (the trainer's backward_start).
    auto last = std::lower_bound(backward_starts_.begin(), backward_starts_.end(), m.end);
    if (last != backward_starts_.begin() && *std::prev(last) >= m.begin) {
      s.backward_start = *std::prev(last) * 1e-6;
    }
    out->steps.push_back(std::move(s));
  }
  // Collectives: by their step argument (or, without one, the step their start falls in); the
  // arrival is the bucket's "ready" instant within that step, else the collective's start.
  std::sort(collectives_.begin(), collectives_.end(),
            [](const Comm& a, const Comm& b) { return a.begin < b.begin; });
  for (const Comm& c : collectives_) {
    int64_t step = c.step;
    if (step < 0) {
      for (const Step& m : steps_) {
        if (c.begin >= m.begin && c.begin < m.end) step = m.step;
      }
    }
    auto it = index_of.find(step);
    if (it == index_of.end()) continue;
    ImportedStep& s = out->steps[it->second];
    double arrival = c.begin;
    const double lo = s.start * 1e6, hi = s.end * 1e6;
    for (auto r = std::lower_bound(ready_.begin(), ready_.end(), std::make_pair(lo, int64_t{-1}));
         r != ready_.end() && r->first <= hi; ++r) {
      if (r->second == c.index) {
        arrival = r->first;
        break;
      }
    }
    s.collectives.push_back({"allreduce", "", c.bytes, c.index, arrival * 1e-6, c.end * 1e-6});
  }
}

}  // namespace stepscope::trace
