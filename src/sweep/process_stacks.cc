#include "sweep/process_stacks.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace stepscope::sweep {
namespace fs = std::filesystem;

namespace {

// "0x00007f..." as a number; 0 when it is not one.
unsigned long long HexId(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 16);
  return end != s.c_str() ? v : 0;
}

// A dump line's frame, `  File "PATH", line N in FUNCTION`.
std::optional<StackFrame> ParseFrame(std::string_view line) {
  const std::string_view head = "  File \"";
  if (line.substr(0, head.size()) != head) return std::nullopt;
  const size_t quote = line.find("\", line ", head.size());
  if (quote == std::string_view::npos) return std::nullopt;
  StackFrame f;
  f.file = std::string(line.substr(head.size(), quote - head.size()));
  std::string_view rest = line.substr(quote + 8);
  const size_t in = rest.find(" in ");
  f.line = std::atoi(std::string(rest.substr(0, in)).c_str());
  if (in != std::string_view::npos) f.function = std::string(rest.substr(in + 4));
  return f;
}

// The helper's own files (python/stepscope_torch/): its wrappers stand between the script and
// what the script called.
bool InHelper(const std::string& file) {
  return file.find("/stepscope_torch/") != std::string::npos;
}

// The file is the interpreter's library, an installed package or the helper's.
bool OutsideScript(const std::string& file) {
  for (const char* part : {"/site-packages/", "/dist-packages/", "/lib/python3"}) {
    if (file.find(part) != std::string::npos) return true;
  }
  return InHelper(file) || file.rfind("<frozen", 0) == 0;
}

// What a process's answer says after its name in DescribePlaces.
std::string AnswerWords(const ProcessPlace& p) {
  switch (p.answer) {
    case ProcessPlace::Answer::kAnswered: {
      const std::string where = WhereInScript(p.main_frames);
      return where.empty() ? " answered without its main thread's stack" : " at " + where;
    }
    case ProcessPlace::Answer::kGone:
      return " had ended";
    case ProcessPlace::Answer::kOtherHost:
      return " runs on another host: not asked";
    case ProcessPlace::Answer::kNotArmed:
      return " was not asked (SIGUSR2 is the script's own)";
    case ProcessPlace::Answer::kNoAnswer:
      break;
  }
  return " did not answer (a SIGUSR2 handler of the script's own, or a stopped process)";
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::uintmax_t SizeOf(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

}  // namespace

std::vector<StackFrame> ThreadFrames(std::string_view dump, std::string_view thread_id) {
  const unsigned long long wanted = HexId(thread_id);
  std::vector<StackFrame> frames;
  bool inside = false;
  size_t at = 0;
  while (at < dump.size()) {
    size_t end = dump.find('\n', at);
    if (end == std::string_view::npos) end = dump.size();
    const std::string_view line = dump.substr(at, end - at);
    at = end + 1;
    for (std::string_view head : {"Thread 0x", "Current thread 0x"}) {
      if (line.substr(0, head.size()) == head) {
        inside = wanted != 0 && HexId(line.substr(head.size() - 2)) == wanted;
        if (inside) frames.clear();  // a later dump of the same thread replaces an earlier one
      }
    }
    if (!inside) continue;
    if (std::optional<StackFrame> f = ParseFrame(line)) frames.push_back(std::move(*f));
  }
  return frames;
}

std::string FrameWords(const StackFrame& frame) {
  return fmt::format("{} line {} in {}", fs::path(frame.file).filename().string(), frame.line,
                     frame.function);
}

std::string WhereInScript(const std::vector<StackFrame>& frames) {
  if (frames.empty()) return "";
  const auto own = std::find_if(frames.begin(), frames.end(),
                                [](const StackFrame& f) { return !OutsideScript(f.file); });
  if (own == frames.end()) return FrameWords(frames.front());
  if (own == frames.begin()) return FrameWords(*own);
  // What the script's line called; the helper's wrappers (its loader, its optimizer) are seen
  // through.
  auto called_at = own - 1;
  while (called_at != frames.begin() && InHelper(called_at->file)) --called_at;
  const StackFrame& called = *called_at;
  return fmt::format("{}, inside {} ({} line {})", FrameWords(*own), called.function,
                     fs::path(called.file).filename().string(), called.line);
}

std::vector<ProcessPlace> AskProcesses(const std::string& run_dir, double wait_s) {
  std::vector<ProcessPlace> places;
  std::vector<std::string> thread_ids;
  const std::string here = HostName();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("process-", 0) != 0 || entry.path().extension() != ".json") continue;
    const nlohmann::json info = nlohmann::json::parse(ReadAll(entry.path().string()), nullptr,
                                                      /*allow_exceptions=*/false);
    if (!info.is_object() || !info.value("pid", nlohmann::json()).is_number_integer()) continue;
    ProcessPlace p;
    p.pid = info["pid"].get<long>();
    if (p.pid <= 0) continue;
    p.host = info.value("host", "");
    if (info.value("rank", nlohmann::json()).is_number_integer()) p.rank = info["rank"].get<int>();
    const nlohmann::json stacks = info.value("stacks", nlohmann::json());
    p.stacks_path = stacks.is_string() ? run_dir + "/" + stacks.get<std::string>() : "";
    if (!stacks.is_string()) {
      p.answer = ProcessPlace::Answer::kNotArmed;
    } else if (p.host != here) {
      p.answer = ProcessPlace::Answer::kOtherHost;
    } else if (kill(static_cast<pid_t>(p.pid), 0) != 0 && errno == ESRCH) {
      p.answer = ProcessPlace::Answer::kGone;
    } else {
      kill(static_cast<pid_t>(p.pid), SIGUSR2);
    }
    places.push_back(std::move(p));
    thread_ids.push_back(info.value("main_thread", ""));
  }
  // A dump is written at once from the signal handler: it is complete once it has stopped growing.
  std::vector<std::uintmax_t> sizes(places.size(), 0);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  for (bool waiting = true; waiting && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    waiting = false;
    for (size_t i = 0; i < places.size(); ++i) {
      if (places[i].answer != ProcessPlace::Answer::kNoAnswer) continue;
      const std::uintmax_t size = SizeOf(places[i].stacks_path);
      if (size == 0 || size != sizes[i]) waiting = true;
      sizes[i] = size;
    }
  }
  for (size_t i = 0; i < places.size(); ++i) {
    if (places[i].answer != ProcessPlace::Answer::kNoAnswer || sizes[i] == 0) continue;
    places[i].answer = ProcessPlace::Answer::kAnswered;
    places[i].main_frames = ThreadFrames(ReadAll(places[i].stacks_path), thread_ids[i]);
  }
  std::sort(places.begin(), places.end(), [](const ProcessPlace& a, const ProcessPlace& b) {
    const int ra = a.rank.value_or(1 << 30), rb = b.rank.value_or(1 << 30);
    return ra != rb ? ra < rb : a.pid < b.pid;
  });
  return places;
}

std::string DescribePlaces(const std::vector<ProcessPlace>& places, const std::string& run_dir,
                           int ranks) {
  std::vector<int> absent;
  if (std::all_of(places.begin(), places.end(), [](const ProcessPlace& p) { return p.rank; })) {
    for (int r = 0; r < ranks; ++r) {
      if (std::none_of(places.begin(), places.end(),
                       [r](const ProcessPlace& p) { return *p.rank == r; })) {
        absent.push_back(r);
      }
    }
  }
  if (places.empty() && absent.empty()) return "";
  std::string out = "where the script's processes were when asked: ";
  bool answered = false;
  for (size_t i = 0; i < places.size(); ++i) {
    const ProcessPlace& p = places[i];
    if (i > 0) out += "; ";
    out += p.rank ? fmt::format("rank {} (pid {}, host {})", *p.rank, p.pid, p.host)
                  : fmt::format("a process of rank unknown (pid {}, host {})", p.pid, p.host);
    out += AnswerWords(p);
    answered = answered || p.answer == ProcessPlace::Answer::kAnswered;
  }
  for (int r : absent) {
    out += fmt::format("{}rank {} had not imported stepscope_torch yet",
                       out.ends_with(": ") ? "" : "; ", r);
  }
  if (answered) out += fmt::format("; every thread's stack in {}/process-*.stacks.txt", run_dir);
  return out;
}

}  // namespace stepscope::sweep
