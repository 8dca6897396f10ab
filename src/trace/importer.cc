#include "trace/importer.h"

#include <cctype>

namespace stepscope::trace {

// Defined in pytorch_importer.cc and stepscope_importer.cc.
Result<ImportedTrace> ImportChromeTrace(const std::string& path, const ImportOptions& options);
Result<ImportedTrace> ImportStepRecords(const std::string& path, const ImportOptions& options);

const char* TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kKinetoGpu:
      return "pytorch-kineto-gpu";
    case TraceFormat::kKinetoCpu:
      return "pytorch-kineto-cpu";
    case TraceFormat::kLegacy:
      return "pytorch-legacy";
    case TraceFormat::kStepscopeSteps:
      return "stepscope-steps";
    case TraceFormat::kStepscopeTrace:
      return "stepscope-trace";
  }
  return "unknown";
}

const char* StepSourceName(StepSource source) {
  switch (source) {
    case StepSource::kProfilerStep:
      return "profiler-step";
    case StepSource::kRecorded:
      return "recorded";
    case StepSource::kOptimizerStep:
      return "optimizer-step";
    case StepSource::kForward:
      return "forward";
    case StepSource::kWholeTrace:
      return "whole-trace";
  }
  return "unknown";
}

const char* ClockKindName(ClockKind kind) {
  switch (kind) {
    case ClockKind::kEpoch:
      return "epoch";
    case ClockKind::kMonotonic:
      return "host-monotonic";
    case ClockKind::kUnaligned:
      return "unaligned";
    case ClockKind::kAligned:
      return "aligned";
  }
  return "unknown";
}

std::optional<int> RankFromFileName(const std::string& path) {
  std::string base =
      path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  std::string lower;
  for (char c : base)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  std::optional<int> found;
  size_t at = 0;
  while ((at = lower.find("rank", at)) != std::string::npos) {
    size_t p = at + 4;
    if (p < lower.size() && (lower[p] == '-' || lower[p] == '_' || lower[p] == '.')) ++p;
    size_t q = p;
    while (q < lower.size() && std::isdigit(static_cast<unsigned char>(lower[q])) && q - p < 9) ++q;
    if (q > p) found = std::stoi(lower.substr(p, q - p));
    at += 4;
  }
  return found;
}

std::vector<StepRecord> ImportedTrace::ToStepRecords() const {
  std::vector<StepRecord> records;
  records.reserve(steps.size());
  for (const ImportedStep& s : steps) {
    StepRecord r;
    r.rank = rank;
    r.step = s.step;
    r.start = s.start;
    r.end = s.end;
    r.backward_start = s.backward_start;
    r.input_wait = s.input_wait;
    r.compute = s.compute;
    r.forward = s.forward, r.backward = s.backward, r.optimizer = s.optimizer;
    r.exposed_comm = s.exposed_comm;
    r.comm_busy = s.comm_busy;
    r.samples = s.samples < 0 ? 0 : s.samples;
    r.warmup = s.warmup;
    r.script_comm = s.script_comm;
    int index = 0;
    for (const ImportedCollective& c : s.collectives) {
      CollectiveRecord cr;
      cr.index = index++;
      cr.bytes = c.bytes < 0 ? 0 : c.bytes;
      cr.ready = c.start;
      cr.start = c.start;
      cr.end = c.end;
      r.collectives.push_back(cr);
    }
    records.push_back(std::move(r));
  }
  return records;
}

Result<ImportedTrace> ImportTrace(const std::string& path, const ImportOptions& options) {
  auto ends_with = [&](const std::string& suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".jsonl") || ends_with(".steps.jsonl")) return ImportStepRecords(path, options);
  return ImportChromeTrace(path, options);
}

}  // namespace stepscope::trace
