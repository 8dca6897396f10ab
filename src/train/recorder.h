// RankRecorder: writes one rank's measurements as they happen, so a job that dies keeps the
// steps it finished: rank-R.steps.jsonl (one StepRecord per line) and rank-R.trace.json (Chrome
// trace: main, communication and loader threads as separate tracks).
//
// The training thread only queues each step; a writer thread formats and writes the queue every
// kWriteInterval and flushes steps.jsonl after each batch, so formatting and file writes stay off
// the measured thread (and out of its caches). A rank killed outright loses at most the steps of
// its last interval; an error return or Close() writes everything queued first.
#pragma once

#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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
  // How long a queued step may wait for the writer.
  static constexpr Seconds kWriteInterval = 0.02;
  // Steps queued before Append waits for the writer (bounded memory when steps are tiny).
  static constexpr size_t kMaxQueued = 4096;

  // Creates `dir` if needed, opens this rank's files and starts the writer.
  static Result<std::unique_ptr<RankRecorder>> Open(const std::string& dir, int rank);
  ~RankRecorder();  // writes what is queued, then stops the writer
  RankRecorder(const RankRecorder&) = delete;
  RankRecorder& operator=(const RankRecorder&) = delete;

  // Queues the step's record and its trace events. Fails if an earlier write failed.
  Status Append(StepRecord record, StepTimeline timeline);
  // Writes everything queued, stops the writer and finishes both files.
  Status Close();

  static std::string StepsPath(const std::string& dir, int rank);
  static std::string TracePath(const std::string& dir, int rank);

 private:
  struct Entry {
    StepRecord record;
    StepTimeline timeline;
  };
  RankRecorder() = default;
  void WriterLoop();
  Status Write(const Entry& entry);  // writer thread only

  int rank_ = 0;
  std::string steps_path_;
  std::ofstream steps_;
  std::unique_ptr<trace::ChromeTraceWriter> trace_;

  std::mutex mu_;
  std::condition_variable cv_;  // the writer: stop or a full queue; Append: room again
  std::vector<Entry> queue_;
  bool stop_ = false;
  Status error_;  // the first write failure
  std::thread writer_;
  bool closed_ = false;
  Status close_status_;
};

}  // namespace stepscope::train
