#include "sweep/sweep_eta.h"

#include <algorithm>
#include <functional>
#include <iterator>

#include "sweep/run_records.h"

namespace stepscope::sweep {

RunDuration MeasureRunDuration(const StoredRun& run, const std::string& run_dir) {
  RunDuration d{run.replicas, "", run.seconds};
  Result<std::vector<std::pair<int, std::string>>> files = RankRecordFiles(run_dir);
  if (!files.ok() || files->empty() || files->front().first != 0) return d;
  Result<std::vector<StepRecord>> records = ReadStepRecords(files->front().second);
  if (!records.ok() || records->empty()) return d;
  const auto [first, last] =
      std::minmax_element(records->begin(), records->end(),
                          [](const StepRecord& a, const StepRecord& b) { return a.step < b.step; });
  const double loop = last->end - first->start;
  if (!(loop > 0) || loop > run.seconds) return d;
  d.steps = static_cast<int64_t>(records->size());
  d.loop_seconds = loop;
  return d;
}

namespace {

using Runs = std::vector<const RunDuration*>;

Runs Where(const Runs& runs, const std::function<bool(const RunDuration&)>& keep) {
  Runs out;
  std::copy_if(runs.begin(), runs.end(), std::back_inserter(out),
               [&](const RunDuration* r) { return keep(*r); });
  return out;
}

double Mean(const Runs& runs, const std::function<double(const RunDuration&)>& value) {
  double sum = 0;
  for (const RunDuration* r : runs) sum += value(*r);
  return sum / static_cast<double>(runs.size());
}

double JobSeconds(const Job& job, const std::string& timing_class, const Runs& all) {
  const Runs same_n = Where(all, [&](const RunDuration& r) { return r.replicas == job.replicas; });
  const Runs& near = same_n.empty() ? all : same_n;
  auto timed = [&](const Runs& runs) {
    return Where(
        runs, [&](const RunDuration& r) { return r.steps > 0 && r.timing_class == timing_class; });
  };
  Runs stepping = timed(near);
  if (stepping.empty()) stepping = timed(all);
  if (job.steps <= 0 || stepping.empty()) {
    return Mean(near, [](const RunDuration& r) { return r.seconds; });
  }
  // The start-up from the runs at the job's replica count whatever their class (a paced run's
  // start-up is an unpaced one's), the time a step from its own class.
  Runs starting = Where(near, [](const RunDuration& r) { return r.steps > 0; });
  if (starting.empty()) starting = stepping;
  return Mean(starting, [](const RunDuration& r) { return r.seconds - r.loop_seconds; }) +
         static_cast<double>(job.steps) * Mean(stepping, [](const RunDuration& r) {
           return r.loop_seconds / static_cast<double>(r.steps);
         });
}

}  // namespace

double EstimateRemainingSeconds(const std::vector<Job>& jobs, size_t next,
                                const std::vector<RunDuration>& finished,
                                const std::vector<std::string>& classes) {
  const Runs all = [&] {
    Runs runs;
    for (const RunDuration& r : finished) {
      if (r.seconds > 0) runs.push_back(&r);
    }
    return runs;
  }();
  if (all.empty()) return 0;
  double eta = 0;
  for (size_t i = next; i < jobs.size(); ++i) {
    eta += JobSeconds(jobs[i], i < classes.size() ? classes[i] : std::string(), all);
  }
  return eta;
}

}  // namespace stepscope::sweep
