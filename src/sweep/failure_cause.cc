#include "sweep/failure_cause.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
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

// "signal 9 (Killed)": the number and the C library's name for it.
std::string SignalWords(int sig) {
  const char* name = strsignal(sig);
  return fmt::format("signal {} ({})", sig, name ? name : "?");
}

// PyTorch's launcher (torch.distributed.run) ends a failed job with a summary: a block per failed
// rank under "Failures:" and "Root Cause (first observed failure):", each with "rank : R
// (local_rank: L)", "host : H", "exitcode : C (pid: P)" and, for a signal, "traceback : Signal 9
// (SIGKILL) received by PID P". A rank killed by a signal is the cause (the others fail at their
// next collective with it gone); else every failed rank, with the first exception the log shows
// (one that is not a rank losing its peer). The helper's own line, where a rank raised under it,
// names the rank and comes first (StepscopeMessage).
std::string TorchRunSummary(const std::vector<std::string>& lines) {
  struct Failed {
    std::string rank, host, signal_words;
    int exit_code = 0;
  };
  std::vector<Failed> failed;
  bool in_summary = false;
  static const std::regex field(R"(^\s+(rank|host|exitcode|traceback)\s*:\s*(.*)$)");
  static const std::regex entry(R"(^\[\d+\]:\s*$)");
  for (const std::string& l : lines) {
    if (l.rfind("Failures:", 0) == 0) in_summary = true;
    if (l.rfind("Root Cause", 0) == 0) in_summary = true;
    if (!in_summary) continue;
    std::smatch m;
    if (std::regex_match(l, entry)) {
      failed.push_back({});
    } else if (!failed.empty() && std::regex_match(l, m, field)) {
      Failed& f = failed.back();
      const std::string key = m[1].str(), value = m[2].str();
      if (key == "rank") f.rank = value.substr(0, value.find(' '));
      if (key == "host") f.host = value;
      if (key == "exitcode") f.exit_code = std::atoi(value.c_str());
      if (key == "traceback" && value.rfind("Signal ", 0) == 0) {  // "Signal 9 (SIGKILL) ..."
        f.signal_words = "signal " + value.substr(7, value.find(" received") - 7);
      }
    }
  }
  if (failed.empty()) return "";
  for (const Failed& f : failed) {
    if (f.exit_code < 0) {
      return fmt::format("rank {} (host {}) died of {}", f.rank, f.host,
                         !f.signal_words.empty() ? f.signal_words : SignalWords(-f.exit_code));
    }
  }
  // Which of several failed ranks failed first the summary cannot say (its "root cause" is the
  // first it observed, often a rank that lost its peer): each is named.
  std::string words;
  for (const Failed& f : failed) {
    words += fmt::format("{}rank {} (host {}, exit {})", words.empty() ? "" : ", ", f.rank, f.host,
                         f.exit_code);
  }
  words += " failed";
  // The script's own error: the first exception line, one of a rank that lost its peer last.
  static const std::regex exception(R"(^([A-Za-z_][\w.]*(Error|Exception|Interrupt))(: .*)?$)");
  std::string first, first_lost;
  for (const std::string& l : lines) {
    if (!std::regex_match(l, exception) || l.find("ChildFailedError") != std::string::npos ||
        l.find("SignalException") != std::string::npos) {
      continue;
    }
    const bool lost = l.find("Connection closed by peer") != std::string::npos ||
                      l.find("Connection reset by peer") != std::string::npos ||
                      l.find("Broken pipe") != std::string::npos;
    std::string& slot = lost ? first_lost : first;
    if (slot.empty()) slot = l;
  }
  const std::string& error = first.empty() ? first_lost : first;
  return error.empty() ? words : words + "; the first error in the log: " + error;
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
  if (std::string summary = TorchRunSummary(lines); !summary.empty()) return summary;
  if (result.exit_code > 128) {
    return "the launcher died of " + SignalWords(result.exit_code - 128);
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
