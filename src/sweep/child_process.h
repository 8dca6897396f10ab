// One launched job: a child process in its own process group, stdout and stderr to a log file.
// Started with posix_spawn (no shell). Waiting can be interrupted by SIGINT/SIGTERM sent to the
// caller: while an InterruptGuard lives, those signals only set a flag that the wait polls.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace stepscope::sweep {

// While alive, SIGINT and SIGTERM no longer end the process: a handler records them (on whatever
// thread they land: libraries such as OpenBLAS start threads of their own, so blocking them on
// one thread is not enough). Restores the previous handlers when destroyed. One at a time.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // True when SIGINT or SIGTERM arrived (consumes it; remembers it).
  bool Interrupted();
  // The signal that interrupted (SIGINT or SIGTERM), 0 if none.
  int signal() const { return signal_; }

 private:
  struct sigaction previous_int_;
  struct sigaction previous_term_;
  int signal_ = 0;
};

struct ChildResult {
  bool interrupted = false;   // the wait was interrupted and the child's group killed
  bool timed_out = false;     // the child outlived the wait's timeout and its group was killed
  std::string ended_because;  // WaitHooks::end_reason's words when they ended the child
  std::string before_end;     // what WaitHooks::before_end said, when the wait ended the child
  int exit_code = 0;          // exit status, or 128 + signal when it died of a signal
  double seconds = 0;         // wall time from start to end
};

// What a wait does besides waiting; each may be empty.
struct WaitHooks {
  // Polled about once a second with the seconds since the child started: words (non-empty) end
  // the child as `timeout_s` would, with `ended_because` set to them.
  std::function<std::string(double elapsed_s)> end_reason;
  // Called once before the child's group is sent SIGTERM for its timeout or an end reason (not
  // for an interrupt): may ask the child's processes what they are doing; its words are kept in
  // `before_end`.
  std::function<std::string()> before_end;
};

class ChildProcess {
 public:
  // Starts argv[0] (looked up on PATH) with `extra_env` added to the environment, stdin from
  // /dev/null, stdout and stderr appended to `log_path`, in a new process group.
  static Result<ChildProcess> Start(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& extra_env,
                                    const std::string& log_path);

  // Waits for the child. When `guard` reports an interrupt, or the child has run `timeout_s`
  // (when positive), sends SIGTERM to the child's process group, then SIGKILL after
  // `kill_grace_s`, reaps it and returns interrupted (or timed_out) = true. `hooks` may also end
  // it (above).
  ChildResult Wait(InterruptGuard* guard, double kill_grace_s = 5.0, double timeout_s = 0,
                   const WaitHooks& hooks = {});

  pid_t pid() const { return pid_; }

 private:
  explicit ChildProcess(pid_t pid, double start) : pid_(pid), start_(start) {}
  pid_t pid_;
  double start_;
};

// The last `max_lines` lines of a text file ("" when it cannot be read).
std::string TailOfFile(const std::string& path, int max_lines);

}  // namespace stepscope::sweep
