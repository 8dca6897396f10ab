#include "sweep/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "core/clock.h"

extern char** environ;

namespace stepscope::sweep {
namespace {

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

// The signal that arrived while a guard was alive. A signal handler can only reach process-wide
// state; this is the one such variable, written by the handler and read by the guard.
static volatile std::sig_atomic_t g_received_signal = 0;

static void RecordSignal(int sig) { g_received_signal = sig; }

InterruptGuard::InterruptGuard() {
  g_received_signal = 0;
  struct sigaction action {};
  action.sa_handler = RecordSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previous_int_);
  sigaction(SIGTERM, &action, &previous_term_);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

bool InterruptGuard::Interrupted() {
  if (signal_ == 0 && g_received_signal != 0) signal_ = g_received_signal;
  return signal_ != 0;
}

Result<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& extra_env,
                                         const std::string& log_path) {
  if (argv.empty()) return Status::Error("nothing to launch: empty command");
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    return Status::Error("cannot open log " + log_path + ": " + std::strerror(errno));
  }
  // Environment: the caller's, with extra_env's NAME=VALUE entries replacing same names.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    env[kv.substr(0, kv.find('='))] = kv;
  }
  for (const std::string& kv : extra_env) env[kv.substr(0, kv.find('='))] = kv;
  std::vector<std::string> env_strings;
  for (auto& [k, kv] : env) env_strings.push_back(kv);
  std::vector<char*> envp, args;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log, 1);
  posix_spawn_file_actions_adddup2(&actions, log, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;  // the child starts with default dispositions and nothing blocked
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const double start = SteadySeconds();
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(log);
  if (rc != 0) {
    return Status::Error("cannot start '" + argv[0] + "': " + std::strerror(rc) +
                         " (is it installed and on PATH?)");
  }
  return ChildProcess(pid, start);
}

ChildResult ChildProcess::Wait(InterruptGuard* guard, double kill_grace_s, double timeout_s,
                               const WaitHooks& hooks) {
  ChildResult result;
  int status = 0;
  double kill_at = -1, next_poll = start_ + 1.0;
  bool stopping = false, killed = false;
  for (;;) {
    const pid_t got = waitpid(pid_, &status, WNOHANG);
    if (got == pid_ || (got < 0 && errno != EINTR)) break;
    const double now = SteadySeconds();
    if (!stopping && guard != nullptr && guard->Interrupted()) {
      result.interrupted = true;
    } else if (!stopping && timeout_s > 0 && now - start_ >= timeout_s) {
      result.timed_out = true;
    } else if (!stopping && hooks.end_reason && now >= next_poll) {
      next_poll = now + 1.0;
      result.ended_because = hooks.end_reason(now - start_);
    }
    if (!stopping && (result.interrupted || result.timed_out || !result.ended_because.empty())) {
      if (!result.interrupted && hooks.before_end) result.before_end = hooks.before_end();
      stopping = true;
      kill(-pid_, SIGTERM);
      kill(-pid_, SIGCONT);  // a stopped group could not act on SIGTERM
      kill_at = SteadySeconds() + kill_grace_s;
    }
    if (stopping && !killed && SteadySeconds() >= kill_at) {
      kill(-pid_, SIGKILL);
      killed = true;
    }
    usleep(50 * 1000);
  }
  // Whatever is left of the group (ranks that outlived the launcher) goes too.
  if (stopping) kill(-pid_, SIGKILL);
  result.exit_code = DecodeStatus(status);
  result.seconds = SteadySeconds() - start_;
  return result;
}

std::string TailOfFile(const std::string& path, int max_lines) {
  std::ifstream in(path);
  if (!in) return "";
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
    if (static_cast<int>(lines.size()) > max_lines) lines.erase(lines.begin());
  }
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace stepscope::sweep
