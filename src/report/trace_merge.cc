#include "report/trace_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <regex>

#include "core/statistics.h"
#include "trace/chrome_writer.h"
#include "trace/importer.h"
#include "trace/match.h"
#include "trace/reader.h"

namespace stepscope::report {
namespace fs = std::filesystem;

namespace {

std::string Key(const trace::TraceEvent& e) {
  const std::string pid = e.pid >= 0 ? std::to_string(e.pid) : std::string(e.pid_str);
  const std::string tid = e.tid >= 0 ? std::to_string(e.tid) : std::string(e.tid_str);
  return pid + " / " + tid;
}

// Copies one rank's events onto the merged timeline.
Status CopyEvents(const std::string& path, int rank, double offset_s, bool keep_tids,
                  trace::ChromeTraceWriter& out, MergeStats* stats) {
  std::map<std::string, int> tids;  // source (pid, tid) -> tid in the rank's process
  auto tid_of = [&](const trace::TraceEvent& e) {
    const std::string key = Key(e);
    auto it = tids.find(key);
    if (it != tids.end()) return it->second;
    int tid = static_cast<int>(tids.size()) + 1;
    if (keep_tids && e.tid >= 0 && e.tid < kCollectiveTrack) tid = static_cast<int>(e.tid);
    tids.emplace(key, tid);
    if (!keep_tids) out.ThreadName(rank, tid, key);
    return tid;
  };
  auto read = trace::ReadChromeTrace(path, [&](const trace::TraceEvent& e) {
    const double ts = e.ts * 1e-6 + offset_s;
    switch (e.ph) {
      case 'X': {
        nlohmann::json args = nlohmann::json::object();
        if (e.step >= 0) args["step"] = e.step;
        if (!e.collective_name.empty()) args["collective"] = std::string(e.collective_name);
        out.Complete(rank, tid_of(e), std::string(e.name), std::string(e.cat), ts, e.dur * 1e-6,
                     args);
        ++stats->events;
        break;
      }
      case 'i':
      case 'I':
        out.Instant(rank, tid_of(e), std::string(e.name), ts);
        ++stats->events;
        break;
      case 'M':
        if (e.name == "thread_name" && !e.meta_name.empty()) {
          out.ThreadName(rank, tid_of(e), std::string(e.meta_name));
          ++stats->events;
        }
        break;  // process names are replaced by "rank R"
      default:
        ++stats->skipped_events;
    }
  });
  if (!read.ok()) return read.status();
  for (const std::string& w : read.value().warning_messages) stats->warnings.push_back(w);
  return Status::Ok();
}

}  // namespace

Result<MergeInputs> FindRunTraces(const std::string& run_dir) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) {
    return Status::Error(run_dir +
                         ": not a directory (pass the run directory that `stepscope "
                         "train --out` wrote, or one holding per-rank traces)");
  }
  const std::regex own(R"(rank-(\d+)\.trace\.json)");
  std::map<int, std::string> own_traces;
  std::vector<std::string> others;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    std::smatch m;
    if (std::regex_match(name, m, own)) {
      int rank = 0;
      const std::string digits = m[1];
      const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
      if (err != std::errc() || end != digits.data() + digits.size()) {
        return Status::Error(entry.path().string() +
                             ": the rank number in the file name is out of range; rename or "
                             "remove the file");
      }
      own_traces[rank] = entry.path().string();
    } else if ((name.ends_with(".json") || name.ends_with(".json.gz")) && name != "run.json" &&
               name != "diagnosis.json" && !name.starts_with("merged")) {
      others.push_back(entry.path().string());
    }
  }
  if (ec) return Status::Error(run_dir + ": cannot list (" + ec.message() + ")");
  MergeInputs in;
  if (!own_traces.empty()) {
    for (const auto& [rank, path] : own_traces) {
      in.traces.push_back(path);
      in.step_records.push_back(
          (fs::path(run_dir) / fmt::format("rank-{}.steps.jsonl", rank)).string());
    }
    return in;
  }
  if (others.empty()) {
    return Status::Error(run_dir +
                         ": no trace found (expected rank-R.trace.json or per-rank "
                         "PyTorch traces *.json / *.json.gz)");
  }
  std::sort(others.begin(), others.end());
  in.traces = std::move(others);
  in.stepscope = false;
  return in;
}

Result<MergeStats> MergeTraces(const MergeInputs& in, const std::string& out_path) {
  MergeStats stats;
  // 1. Per-rank summaries (rank, clock, collectives) to match collectives and align clocks.
  std::vector<trace::ImportedTrace> imported;
  std::vector<int> ranks;
  for (size_t i = 0; i < in.traces.size(); ++i) {
    trace::ImportOptions options;
    std::string source = in.traces[i];
    if (in.stepscope) {
      source = in.step_records[i];
      options.rank = trace::RankFromFileName(in.traces[i]);
    }
    auto t = trace::ImportTrace(source, options);
    if (!t.ok()) {
      if (!in.stepscope) return t.status();
      stats.warnings.push_back(t.status().message() + " (rank left without collective links)");
      ranks.push_back(options.rank.value_or(static_cast<int>(i)));
      continue;
    }
    ranks.push_back(t.value().rank);
    imported.push_back(std::move(t.value()));
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (ranks[i] == ranks[j]) {
        return Status::Error(fmt::format("{} and {} are both rank {}: pass one trace per rank",
                                         in.traces[j], in.traces[i], ranks[i]));
      }
    }
  }
  trace::MatchResult match;
  if (imported.size() > 1) {
    auto m = trace::MatchCollectives(imported);
    if (m.ok()) {
      match = std::move(m.value());
      for (const auto& w : match.warnings) stats.warnings.push_back(w);
    } else {
      stats.warnings.push_back(m.status().message());
    }
  }

  // 2. Clock offsets (seconds added to each rank's timestamps).
  std::map<int, double> offset;
  for (int r : ranks) offset[r] = 0;
  const bool comparable = in.stepscope || imported.size() < 2 || trace::ClocksComparable(imported);
  stats.alignment = comparable ? "aligned clocks" : "aligned on collective ends";
  if (!comparable && !match.collectives.empty()) {
    // A collective ends at (nearly) the same instant on every rank: align each rank's ends with
    // the lowest rank's, taking the median over the collectives both took part in.
    const int ref = *std::min_element(match.ranks.begin(), match.ranks.end());
    std::map<int, std::vector<double>> diffs;
    for (const auto& c : match.collectives) {
      double ref_end = 0;
      bool has_ref = false;
      for (size_t i = 0; i < c.ranks.size(); ++i) {
        if (c.ranks[i] == ref) {
          ref_end = c.arrival[i] + c.duration[i];
          has_ref = true;
        }
      }
      if (!has_ref) continue;
      for (size_t i = 0; i < c.ranks.size(); ++i) {
        diffs[c.ranks[i]].push_back(ref_end - (c.arrival[i] + c.duration[i]));
      }
    }
    for (auto& [r, d] : diffs) offset[r] = Median(d);
  } else if (!comparable) {
    stats.warnings.push_back(
        "clocks are not comparable and no collective matched across ranks: "
        "ranks are shown on their own clocks");
  }

  // 3. Stream every rank's events, then the collective track and its flows.
  auto writer = trace::ChromeTraceWriter::Open(out_path);
  if (!writer.ok()) return writer.status();
  trace::ChromeTraceWriter& out = *writer.value();
  for (size_t i = 0; i < in.traces.size(); ++i) {
    const int rank = ranks[i];
    out.ProcessName(rank, fmt::format("rank {}", rank));
    out.ThreadName(rank, kCollectiveTrack, "collectives (arrival to end; arrows: first to last)");
    STEPSCOPE_RETURN_IF_ERROR(
        CopyEvents(in.traces[i], rank, offset[rank], in.stepscope, out, &stats));
  }
  uint64_t flow_id = 0;
  for (const auto& c : match.collectives) {
    ++stats.collectives;
    size_t first = 0, last = 0;
    for (size_t i = 0; i < c.ranks.size(); ++i) {
      const double a = c.arrival[i] + offset[c.ranks[i]];
      if (a < c.arrival[first] + offset[c.ranks[first]]) first = i;
      if (a > c.arrival[last] + offset[c.ranks[last]]) last = i;
      nlohmann::json args = {{"step", c.step},
                             {"index", c.index},
                             {"group", c.group},
                             {"last_rank", c.last_rank},
                             {"skew_ms", 1e3 * c.skew}};
      out.Complete(c.ranks[i], kCollectiveTrack, fmt::format("{} #{}", c.name, c.index),
                   "collective", a, c.duration[i], args);
    }
    if (c.ranks.size() < 2 || first == last) continue;
    // Inside the slices (a flow binds to the slice that encloses its timestamp).
    auto inside = [&](size_t i) {
      return c.arrival[i] + offset[c.ranks[i]] + std::min(0.5 * c.duration[i], 1e-6);
    };
    ++flow_id;
    const std::string name = fmt::format("step {} {} #{}", c.step, c.name, c.index);
    out.FlowStart(c.ranks[first], kCollectiveTrack, flow_id, name, inside(first));
    out.FlowEnd(c.ranks[last], kCollectiveTrack, flow_id, name, inside(last));
    ++stats.flows;
  }
  out.Metadata("stepscope_merge", {{"ranks", ranks},
                                   {"alignment", stats.alignment},
                                   {"collectives", stats.collectives},
                                   {"inputs", in.traces}});
  STEPSCOPE_RETURN_IF_ERROR(out.Close());
  stats.ranks = static_cast<int>(ranks.size());
  return stats;
}

Result<MergeStats> MergeRunTraces(const std::string& run_dir, const std::string& out_path) {
  auto in = FindRunTraces(run_dir);
  if (!in.ok()) return in.status();
  return MergeTraces(in.value(), out_path);
}

}  // namespace stepscope::report
