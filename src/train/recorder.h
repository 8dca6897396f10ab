// RankRecorder: writes one rank's measurements as they happen, so a job that dies keeps every
// step it finished: rank-R.steps.jsonl (one StepRecord per line, flushed each step) and
// rank-R.trace.json (Chrome trace: main, communication and loader threads as separate tracks).
#pragma once

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/step_record.h"
#include "trace/chrome_writer.h"

namespace stepscope::train {

struct Interval {
  Seconds begin = 0;
  Seconds end = 0;
};

// The phases of one step as intervals on the aligned clock (for the timeline view).
struct StepTimeline {
  std::vector<Interval> input_waits;  // one per micro-batch
  std::vector<Interval> forwards;
  std::vector<Interval> backwards;
  std::vector<Interval> loads;  // loader worker producing each batch
  Interval exposed_wait;        // main thread blocked on reductions
  Interval optimizer;
};

class RankRecorder {
 public:
  // Creates `dir` if needed and opens this rank's files.
  static Result<std::unique_ptr<RankRecorder>> Open(const std::string& dir, int rank);
  // Appends the step's record (flushed) and its trace events.
  Status Append(const StepRecord& record, const StepTimeline& timeline);
  // Finishes the trace file.
  Status Close();

  static std::string StepsPath(const std::string& dir, int rank);
  static std::string TracePath(const std::string& dir, int rank);

 private:
  RankRecorder() = default;
  int rank_ = 0;
  std::string steps_path_;
  std::ofstream steps_;
  std::unique_ptr<trace::ChromeTraceWriter> trace_;
};

}  // namespace stepscope::train
