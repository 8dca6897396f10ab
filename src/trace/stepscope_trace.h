// Collector for stepscope's own Chrome traces (rank-R.trace.json written by `stepscope train`):
// pid = rank; on the main track "step N" (cat step, args samples/warmup), "input wait" (input),
// forward/backward/optimizer (compute; "backward" also gives the step's backward start),
// "exposed comm wait" (comm_wait) and "bucket K ready" instants; on the communication track
// "all-reduce bucket K" (cat comm, args step/bytes).
// Internal to the importers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "trace/event.h"
#include "trace/importer.h"
#include "trace/intervals.h"

namespace stepscope::trace {

class StepscopeTraceCollector {
 public:
  void Visit(const TraceEvent& e);
  // Whether the file had stepscope's step events (decides the format).
  bool found() const { return !steps_.empty(); }
  // The pid of the step events (stepscope writes pid = rank); -1 when they disagree.
  int64_t rank() const { return rank_; }
  // Fills out->steps; warnings go to out.
  void Finish(ImportedTrace* out);

 private:
  struct Step {
    int64_t step;
    double begin, end;  // microseconds
    int64_t samples;
    int warmup;
  };
  struct Comm {
    int64_t step, index, bytes;
    double begin, end;
  };
  std::vector<Step> steps_;
  std::vector<Interval> input_, compute_, comm_wait_, comm_;
  std::vector<double> backward_starts_;  // microseconds, of the "backward" compute spans
  std::vector<Comm> collectives_;
  std::vector<std::pair<double, int64_t>> ready_;  // (ts, bucket index)
  int64_t rank_ = -2;                              // -2: no step seen yet
};

}  // namespace stepscope::trace
