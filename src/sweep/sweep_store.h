// Where a sweep keeps its runs, so that running the same command again resumes it:
//   DIR/sweep.json            the workload the sweep is for, and every run's arguments and outcome
//   DIR/runs/<name>/          one run: run.json (written last by `train`: the completion marker),
//                             rank-R.steps.jsonl, log.txt (the launcher's stdout and stderr)
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace stepscope::sweep {

inline constexpr int kSweepSchemaVersion = 1;

// What sweep.json remembers about one run.
struct StoredRun {
  std::string name;
  int replicas = 0;
  std::vector<std::string> args;  // the program's arguments, without --out
  std::string state;              // "finished" or "failed"
  double seconds = 0;             // wall time of the run
  int exit_code = 0;
};

// The runs stored in a sweep.json's text (`manifest` names the file in errors); an error when the
// text is damaged or was made for another workload than `workload`.
Result<std::vector<StoredRun>> ParseSweepManifest(const std::string& text,
                                                  const std::string& manifest,
                                                  const std::vector<std::string>& workload);

class SweepStore {
 public:
  // Opens (creating) DIR. `workload` identifies what is being measured (the effective train
  // arguments); a DIR made for another workload is refused unless `fresh`, which discards its
  // runs first.
  static Result<SweepStore> Open(const std::string& dir, const std::vector<std::string>& workload,
                                 bool fresh);

  const std::string& dir() const { return dir_; }
  std::string RunDir(const std::string& name) const { return dir_ + "/runs/" + name; }
  // True when the run has its run.json and was made with exactly these arguments.
  bool Finished(const std::string& name, const std::vector<std::string>& args) const;
  // The stored record of a run, or nullptr.
  const StoredRun* Find(const std::string& name) const;
  const std::vector<StoredRun>& runs() const { return runs_; }

  // Empties a run's directory before it (re)starts.
  Status PrepareRun(const std::string& name);
  // Records a run's outcome and rewrites sweep.json (atomically: write then rename).
  Status Record(const StoredRun& run);

 private:
  Status Save() const;
  std::string dir_;
  std::vector<std::string> workload_;
  std::vector<StoredRun> runs_;
};

}  // namespace stepscope::sweep
