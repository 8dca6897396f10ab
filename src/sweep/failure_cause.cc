#include "sweep/failure_cause.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <csignal>
#include <cstring>
#include <regex>
#include <sstream>
#include <vector>

namespace stepscope::sweep {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// The first line stepscope itself wrote about the failure: a rank's abort message ("stepscope:
// rank 1 (host h): ...") before any other error line of train ("stepscope train: ...").
std::string StepscopeMessage(const std::vector<std::string>& lines) {
  for (const std::string& l : lines) {
    if (l.rfind("stepscope: rank ", 0) == 0) return l.substr(std::strlen("stepscope: "));
  }
  for (const std::string& l : lines) {
    if (l.rfind("stepscope train: ", 0) == 0 && l.find("replica(s) on") == std::string::npos) {
      return l.substr(std::strlen("stepscope train: "));
    }
    if (l.rfind("stepscope: ", 0) == 0) return l.substr(std::strlen("stepscope: "));
  }
  return "";
}

// OpenMPI's account of a rank that died: "mpirun noticed that process rank 1 with PID 0 on node
// vm exited on signal 9 (Killed)."
std::string LauncherNotice(const std::vector<std::string>& lines) {
  static const std::regex died(
      R"(process rank (\d+) with PID \d+ on node (\S+) exited on signal (\d+)(?: \(([^)]*)\))?)");
  std::smatch m;
  for (const std::string& l : lines) {
    if (std::regex_search(l, m, died)) {
      std::string cause =
          fmt::format("rank {} on host {} died of signal {}", m[1].str(), m[2].str(), m[3].str());
      if (m[4].matched) cause += " (" + m[4].str() + ")";
      return cause;
    }
  }
  return "";
}

}  // namespace

std::string FailureCause(const ChildResult& result, double run_timeout_s,
                         const std::string& log_text) {
  const std::vector<std::string> lines = Lines(log_text);
  if (result.timed_out) {
    std::string cause =
        fmt::format("no result after {:g} s (--run-timeout): the run's process group was killed",
                    run_timeout_s);
    const std::string own = StepscopeMessage(lines);
    return own.empty() ? cause : cause + "; last message: " + own;
  }
  if (std::string own = StepscopeMessage(lines); !own.empty()) return own;
  if (std::string notice = LauncherNotice(lines); !notice.empty()) return notice;
  if (result.exit_code > 128) {
    const int sig = result.exit_code - 128;
    const char* name = strsignal(sig);
    return fmt::format("the launcher died of signal {} ({})", sig, name ? name : "?");
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->find_first_not_of(" \t-") != std::string::npos) {
      return fmt::format("exit {}: {}", result.exit_code, *it);
    }
  }
  return fmt::format("exit {} with an empty log", result.exit_code);
}

std::string FullDiskCause(const std::string& dir) {
  struct statvfs fs;
  if (statvfs(dir.c_str(), &fs) != 0) return "";
  const unsigned long long free_bytes =
      static_cast<unsigned long long>(fs.f_bavail) * static_cast<unsigned long long>(fs.f_frsize);
  if (free_bytes >= (1ULL << 20)) return "";
  return fmt::format(
      "no space left on the filesystem of {} ({} KiB free): the run could not write its "
      "records or its log; free space and run the same command again",
      dir, free_bytes / 1024);
}

}  // namespace stepscope::sweep
