// Where the processes of a user's script are, asked through the helper's stack dump
// (python/stepscope_torch/stack_dump.py): each process that imported the helper under diagnose
// left `process-HOST-PID.json` in its run's folder and writes every thread's Python stack to
// `process-HOST-PID.stacks.txt` when sent SIGUSR2. Diagnose asks before it ends a run that is
// stuck (--start-timeout, --run-timeout), so that the cause says where each rank was.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope::sweep {

struct StackFrame {
  std::string file;
  int line = 0;
  std::string function;
};

// The frames of the thread `thread_id` ("0x" and hex digits, as the process file gives it) in a
// Python fault-handler dump, innermost first (of the last dump, where the file holds several:
// the process was asked more than once); empty when the dump has no such thread.
std::vector<StackFrame> ThreadFrames(std::string_view dump, std::string_view thread_id);

// A frame in words, "train.py line 45 in load" (the file's name without its folder).
std::string FrameWords(const StackFrame& frame);

// Where a thread was, in words: its innermost frame in the script's own files (not the
// interpreter's library, an installed package or the helper), and the call that line made when
// the thread was further in ("train.py line 45 in setup, inside barrier (distributed_c10d.py
// line 2290)"); the innermost frame when none is the script's; "" without frames.
std::string WhereInScript(const std::vector<StackFrame>& frames);

struct ProcessPlace {
  enum class Answer {
    kAnswered,   // its stacks were written
    kGone,       // the process no longer exists
    kOtherHost,  // on another host: not asked from here
    kNoAnswer,   // alive, but wrote nothing in time (its own SIGUSR2 handler, a stopped process)
    kNotArmed,   // SIGUSR2 was the script's own when it imported the helper: never signalled
  };
  std::optional<int> rank;  // RANK from its launcher, when it set one
  long pid = 0;
  std::string host;
  Answer answer = Answer::kNoAnswer;
  std::vector<StackFrame> main_frames;  // its main thread's, innermost first
  std::string stacks_path;
};

// Reads the process files of `run_dir`, sends SIGUSR2 to each live process on this host and waits
// up to `wait_s` for their dumps to be written. Sorted by rank (unknown last), then pid.
std::vector<ProcessPlace> AskProcesses(const std::string& run_dir, double wait_s);

// The places in words, one clause per process: "where the script's processes were when asked:
// rank 0 (pid 41, host h) at train.py line 45 in load_data, inside ...; rank 1 ...; every
// thread's stack in RUN_DIR/process-*.stacks.txt". With `ranks` (the job's count) and every
// place's rank known, a rank without a place is said not to have imported the helper yet. ""
// when there is nothing to say.
std::string DescribePlaces(const std::vector<ProcessPlace>& places, const std::string& run_dir,
                           int ranks = 0);

}  // namespace stepscope::sweep
