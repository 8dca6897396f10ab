// ChromeTraceWriter: streams trace events to a file in the Chrome trace object form
// {"traceEvents":[...], "displayTimeUnit":"ms", <metadata keys>}, readable by Perfetto,
// chrome://tracing and stepscope's own reader. Times are given in seconds on the aligned clock
// and written as microseconds. Writes are buffered; nothing is held per event.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/status.h"

namespace stepscope::trace {

class ChromeTraceWriter {
 public:
  static Result<std::unique_ptr<ChromeTraceWriter>> Open(const std::string& path);
  ~ChromeTraceWriter();
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  void ProcessName(int pid, const std::string& name);
  void ThreadName(int pid, int tid, const std::string& name);
  // ph "X": complete event; ts and dur in seconds on the aligned clock (written as microseconds).
  void Complete(int pid, int tid, const std::string& name, const std::string& category,
                double ts_seconds, double dur_seconds, const nlohmann::json& args = {});
  void Instant(int pid, int tid, const std::string& name, double ts_seconds);
  // Flow arrows (ph "s"/"f", bp "e") linking e.g. a late rank's arrival to a collective.
  void FlowStart(int pid, int tid, uint64_t id, const std::string& name, double ts_seconds);
  void FlowEnd(int pid, int tid, uint64_t id, const std::string& name, double ts_seconds);
  // A top-level key written after the event array (e.g. "distributedInfo"). A later value for
  // the same key replaces the earlier one.
  void Metadata(const std::string& key, const nlohmann::json& value);
  // Finishes the JSON and closes the file; safe to call more than once (later calls return the
  // first call's result). The destructor closes too.
  Status Close();

  // Appends `s` to `out` as a JSON string literal (quotes included), escaping quotes,
  // backslashes, control characters and '<' '>' '&' (so the text can sit inside HTML).
  static void AppendJsonString(std::string_view s, std::string& out);

 private:
  ChromeTraceWriter(std::FILE* file, std::string path);
  void BeginEvent();                    // writes the separator between events
  void AppendPidTid(int pid, int tid);  // ,"pid":P,"tid":T
  // An event without duration: `head` opens it up to the name; `id` (flows) may be null.
  void PointEvent(const char* head, int pid, int tid, const std::string& name, const uint64_t* id,
                  double ts_seconds);
  void AppendMicros(double seconds);
  void MaybeFlush();
  Status Flush();

  std::FILE* file_ = nullptr;
  std::string path_;
  std::string buffer_;
  nlohmann::json metadata_ = nlohmann::json::object();
  bool first_event_ = true;
  bool closed_ = false;
  bool write_failed_ = false;
  Status close_status_;
};

}  // namespace stepscope::trace
