#include "trace/trace_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/statistics.h"

namespace stepscope::trace {
namespace {

namespace fs = std::filesystem;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// stepscope's own files in a run's folder, never a trace: a run's and a sweep's summaries, and
// what the helper leaves in a run it was ended in (rank-R.progress.json, process-HOST-PID.json).
bool IsStepscopeFile(const std::string& name) {
  return name == "run.json" || name == "diagnosis.json" || name == "sweep.json" ||
         name == "device.json" || EndsWith(name, ".progress.json") ||
         (name.rfind("process-", 0) == 0 && EndsWith(name, ".json"));
}

// How collectives were paired: "sequence" (every process group carried sequence numbers),
// "order" (none did), or "sequence and order" (some did).
const char* MatchedBy(const MatchResult& m) {
  if (m.groups_by_sequence > 0) return m.groups_by_order > 0 ? "sequence and order" : "sequence";
  return "order";
}

void Shift(ImportedTrace* t, double offset) {
  for (ImportedStep& s : t->steps) {
    s.start += offset;
    s.end += offset;
    if (s.backward_start) *s.backward_start += offset;
    for (ImportedCollective& c : s.collectives) {
      c.start += offset;
      c.end += offset;
    }
  }
}

// Unaligned clocks: each rank's offset against the lowest rank. A collective ends at about the
// same moment on every rank (it cannot finish before the last rank's data arrived), so the median
// difference of matched collectives' ends is the clock offset; without collectives, step ends.
void AlignClocks(TraceSet* set) {
  const ImportedTrace& ref = set->traces.front();
  std::map<int, std::vector<double>> deltas;
  for (const MatchedCollective& m : set->match.collectives) {
    auto it = std::find(m.ranks.begin(), m.ranks.end(), ref.rank);
    if (it == m.ranks.end()) continue;
    const size_t i = it - m.ranks.begin();
    const double ref_end = m.arrival[i] + m.duration[i];
    for (size_t j = 0; j < m.ranks.size(); ++j) {
      if (j != i) deltas[m.ranks[j]].push_back(ref_end - (m.arrival[j] + m.duration[j]));
    }
  }
  set->clock_method = ClockMethod::kCollectiveEnds;
  std::map<int64_t, double> ref_ends;
  for (const ImportedStep& s : ref.steps) ref_ends[s.step] = s.end;
  for (ImportedTrace& t : set->traces) {
    double offset = 0;
    if (t.rank != ref.rank) {
      auto d = deltas.find(t.rank);
      if (d != deltas.end() && !d->second.empty()) {
        offset = Median(d->second);
      } else {
        std::vector<double> ends;
        for (const ImportedStep& s : t.steps) {
          auto e = ref_ends.find(s.step);
          if (e != ref_ends.end()) ends.push_back(e->second - s.end);
        }
        offset = Median(ends);
        set->clock_method = ClockMethod::kStepEnds;
      }
    }
    set->clock_offsets[t.rank] = offset;
    Shift(&t, offset);
  }
}

}  // namespace

const char* ClockMethodName(ClockMethod method) {
  switch (method) {
    case ClockMethod::kShared:
      return "shared-clock";
    case ClockMethod::kCollectiveEnds:
      return "offsets-from-collective-ends";
    case ClockMethod::kStepEnds:
      return "offsets-from-step-ends";
  }
  return "unknown";
}

Result<std::vector<std::string>> ExpandInputs(const std::vector<std::string>& args,
                                              std::vector<std::string>* notes) {
  std::vector<std::string> files;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<std::string> found;
      std::set<std::string> steps_stems;
      for (const auto& entry : fs::directory_iterator(arg, ec)) {
        if (!entry.is_regular_file(ec)) continue;
        const std::string name = entry.path().filename().string();
        const std::string path = entry.path().string();
        if (EndsWith(name, ".steps.jsonl")) {
          steps_stems.insert(name.substr(0, name.size() - 12));
          found.push_back(path);
        } else if ((EndsWith(name, ".json") || EndsWith(name, ".json.gz")) &&
                   !IsStepscopeFile(name)) {
          found.push_back(path);
        }
      }
      if (ec) return Status::Error(arg + ": cannot list the directory (" + ec.message() + ")");
      std::sort(found.begin(), found.end());
      size_t before = files.size();
      for (const std::string& path : found) {
        const std::string name = fs::path(path).filename().string();
        if (EndsWith(name, ".trace.json") && steps_stems.count(name.substr(0, name.size() - 11))) {
          notes->push_back(path + ": skipped; the step records beside it are exact");
          continue;
        }
        files.push_back(path);
      }
      if (files.size() == before) {
        return Status::Error(arg +
                             ": no trace files in this directory (looked for *.json, "
                             "*.json.gz, *.pt.trace.json and rank-*.steps.jsonl)");
      }
    } else if (fs::exists(arg, ec)) {
      files.push_back(arg);
    } else {
      return Status::Error(arg + ": no such file or directory");
    }
  }
  if (files.empty()) return Status::Error("no input files given");
  return files;
}

Result<TraceSet> LoadTraceSet(const std::vector<std::string>& files,
                              const TraceSetOptions& options) {
  if (options.rank && files.size() != 1) {
    return Status::Error(fmt::format(
        "a rank was given for {} files; it applies to a single file only (use the file names' "
        "ranks instead)",
        files.size()));
  }
  TraceSet set;
  std::map<int, std::string> owner;
  std::vector<std::string> stepless;
  for (const std::string& path : files) {
    ImportOptions opt = options.import;
    if (options.rank) opt.rank = options.rank;
    if (options.rank_from_file_name) {
      std::optional<int> r = RankFromFileName(path);
      if (!r) {
        return Status::Error(path +
                             ": the file name has no rank (e.g. rank-3); rename it or "
                             "drop the rank-from-file-name option");
      }
      opt.rank = r;
    }
    Result<ImportedTrace> t = ImportTrace(path, opt);
    if (!t.ok()) return t.status();
    for (const std::string& w : t->warning_messages) set.warnings.push_back(w);
    if (t->steps.empty()) {
      set.warnings.push_back(path + ": no steps; the file is left out of the analysis");
      stepless.push_back(path);
      continue;
    }
    auto [it, fresh] = owner.emplace(t->rank, path);
    if (!fresh) {
      return Status::Error(fmt::format(
          "rank {} appears twice: {} and {}; pass one file per rank (or rename the files and use "
          "--rank-from-filename)",
          t->rank, it->second, path));
    }
    set.traces.push_back(std::move(t).value());
  }
  if (set.traces.empty()) {
    std::string names;
    for (const std::string& p : stepless) names += (names.empty() ? "" : ", ") + p;
    return Status::Error(names +
                         ": no steps: the trace has no complete events with a duration (is it "
                         "empty or cut short?)");
  }
  std::sort(set.traces.begin(), set.traces.end(),
            [](const ImportedTrace& a, const ImportedTrace& b) { return a.rank < b.rank; });
  for (ImportedTrace& t : set.traces) {
    bool any_warmup = false, any_samples = false;
    for (const ImportedStep& s : t.steps) {
      any_warmup = any_warmup || s.warmup;
      any_samples = any_samples || s.samples >= 0;
    }
    if (!any_warmup && options.warmup_steps > 0 &&
        t.steps.size() > static_cast<size_t>(options.warmup_steps)) {
      for (int i = 0; i < options.warmup_steps; ++i) t.steps[i].warmup = true;
    }
    if (!any_samples) {
      set.samples_assumed = true;
      for (ImportedStep& s : t.steps) s.samples = options.samples_per_step;
    }
  }
  Result<MatchResult> match = MatchCollectives(set.traces);
  if (!match.ok()) return match.status();
  set.match = std::move(match).value();
  for (const std::string& w : set.match.warnings) set.warnings.push_back(w);
  if (set.match.method == MatchMethod::kShortestDuration && set.traces.size() > 1) {
    AlignClocks(&set);
  } else {
    for (const ImportedTrace& t : set.traces) set.clock_offsets[t.rank] = 0;
  }
  for (const ImportedTrace& t : set.traces) {
    std::vector<StepRecord> r = t.ToStepRecords();
    set.records.insert(set.records.end(), r.begin(), r.end());
  }
  // The analysis pairs collectives across ranks by (step, index): index them by the match.
  if (set.traces.size() > 1) NumberMatchedCollectives(set.match, &set.records);
  return set;
}

std::vector<std::pair<std::string, double>> ScriptCallsPerStep(const TraceSet& set) {
  std::map<std::string, double> most;
  for (const ImportedTrace& t : set.traces) {
    std::map<std::string, int64_t> calls;
    int64_t steady = 0;
    for (const ImportedStep& s : t.steps) {
      if (s.warmup) continue;
      ++steady;
      for (const auto& [name, n] : s.script_calls) calls[name] += n;
    }
    for (const auto& [name, n] : calls) {
      most[name] = std::max(most[name], static_cast<double>(n) / static_cast<double>(steady));
    }
  }
  return {most.begin(), most.end()};
}

nlohmann::json TraceSectionJson(const TraceSet& set) {
  using nlohmann::json;
  json files = json::array();
  json ranks = json::array();
  json steps = json::array();
  for (size_t i = 0; i < set.traces.size(); ++i) {
    const ImportedTrace& t = set.traces[i];
    files.push_back({{"path", t.path},
                     {"format", TraceFormatName(t.format)},
                     {"rank", t.rank},
                     {"rank_from_metadata", t.rank_from_metadata},
                     {"world_size", t.world_size},
                     {"clock", ClockKindName(t.clock)},
                     {"steps_from", StepSourceName(t.steps_from)},
                     {"bytes", t.bytes},
                     {"events", t.events},
                     {"warnings", t.warnings}});
    double n = 0, compute = 0, comm = 0, overlap = 0, exposed = 0, idle = 0, input = 0, step = 0;
    double script = 0;
    bool script_known = false;  // the trace tells the script's own collectives apart
    int64_t host_bound = 0;
    for (const ImportedStep& s : t.steps) {
      steps.push_back({{"rank", t.rank},
                       {"step", s.step},
                       {"warmup", s.warmup},
                       {"start", s.start},
                       {"end", s.end},
                       {"compute", s.compute},
                       {"comm_busy", s.comm_busy},
                       {"overlap", s.overlap},
                       {"exposed_comm", s.exposed_comm},
                       {"idle", s.idle},
                       {"input_wait", s.input_wait},
                       {"host_bound", s.host_bound},
                       {"collectives", s.collectives.size()}});
      if (s.script_comm) steps.back()["script_comm"] = *s.script_comm;
      if (s.warmup) continue;
      n += 1;
      step += s.step_time();
      compute += s.compute;
      comm += s.comm_busy;
      overlap += s.overlap;
      exposed += s.exposed_comm;
      idle += s.idle;
      input += s.input_wait;
      host_bound += s.host_bound ? 1 : 0;
      script_known = script_known || s.script_comm.has_value();
      script += s.script_comm.value_or(0);
    }
    const double k = n > 0 ? 1 / n : 0;
    auto it = std::find(set.match.ranks.begin(), set.match.ranks.end(), t.rank);
    const size_t m = it - set.match.ranks.begin();
    ranks.push_back(
        {{"rank", t.rank},
         {"steps", static_cast<int64_t>(n)},
         {"step", step * k},
         {"compute", compute * k},
         {"comm_busy", comm * k},
         {"overlap", overlap * k},
         {"overlap_fraction", comm > 0 ? overlap / comm : 0.0},
         {"exposed_comm", exposed * k},
         {"idle", idle * k},
         {"input_wait", input * k},
         {"host_bound_steps", host_bound},
         {"times_last", m < set.match.times_last.size() ? set.match.times_last[m] : 0},
         {"clock_offset", set.clock_offsets.count(t.rank) ? set.clock_offsets.at(t.rank) : 0.0}});
    if (script_known) ranks.back()["script_comm"] = script * k;
  }
  return {{"files", files},
          {"clock_method", ClockMethodName(set.clock_method)},
          {"match_method", MatchMethodName(set.match.method)},
          {"matched_by", MatchedBy(set.match)},
          {"groups_by_sequence", set.match.groups_by_sequence},
          {"groups_by_order", set.match.groups_by_order},
          {"collectives_matched", set.match.collectives.size()},
          {"ranks", ranks},
          {"steps", steps},
          {"notes", set.notes},
          {"warnings", set.warnings}};
}

std::string TraceSummaryText(const TraceSet& set) {
  std::string out = fmt::format(
      "Traces: {} file(s), clocks: {}, collectives matched: {} ({}, by {})\n", set.traces.size(),
      ClockMethodName(set.clock_method), set.match.collectives.size(),
      MatchMethodName(set.match.method), MatchedBy(set.match));
  const nlohmann::json section = TraceSectionJson(set);
  // The time blocked in the script's own collectives (part of idle), where some trace tells it.
  bool own = false;
  for (const auto& r : section["ranks"]) own = own || r.contains("script_comm");
  out += fmt::format("  {:>4} {:>20} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6}{}\n", "rank",
                     "format", "step ms", "compute", "comm", "hidden", "exposed", "input", "idle",
                     own ? "  own coll." : "");
  for (size_t i = 0; i < set.traces.size(); ++i) {
    const auto& r = section["ranks"][i];
    std::string script;
    if (own) {
      script = r.contains("script_comm")
                   ? fmt::format(" {:>10.3f}", r["script_comm"].get<double>() * 1e3)
                   : fmt::format(" {:>10}", "-");
    }
    out += fmt::format(
        "  {:>4} {:>20} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>5.1f}%{}\n",
        set.traces[i].rank, TraceFormatName(set.traces[i].format), r["step"].get<double>() * 1e3,
        r["compute"].get<double>() * 1e3, r["comm_busy"].get<double>() * 1e3,
        r["overlap"].get<double>() * 1e3, r["exposed_comm"].get<double>() * 1e3,
        r["input_wait"].get<double>() * 1e3,
        r["step"].get<double>() > 0 ? 100 * r["idle"].get<double>() / r["step"].get<double>() : 0.0,
        script);
  }
  for (const ImportedTrace& t : set.traces) {
    if (t.steps_from == StepSource::kProfilerStep || t.steps_from == StepSource::kRecorded) {
      continue;
    }
    out += fmt::format("  rank {}: steps inferred ({}), not annotated; see the warnings\n", t.rank,
                       StepSourceName(t.steps_from));
  }
  return out;
}

}  // namespace stepscope::trace
