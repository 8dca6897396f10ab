// Importer for Chrome traces written by PyTorch's profilers (Kineto GPU, Kineto CPU-only with
// gloo, the legacy autograd profiler) and other Chrome traces with "ProfilerStep#N" steps.
#include <algorithm>
#include <charconv>
#include <map>
#include <string>

#include "trace/collective_origin.h"
#include "trace/importer.h"
#include "trace/intervals.h"
#include "trace/reader.h"
#include "trace/stepscope_trace.h"

namespace stepscope::trace {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

int DtypeBytes(std::string_view dtype) {
  if (dtype == "Float" || dtype == "Int" || dtype == "float" || dtype == "int") return 4;
  if (dtype == "Double" || dtype == "Long" || dtype == "double" || dtype == "long") return 8;
  if (dtype == "Half" || dtype == "BFloat16" || dtype == "Short") return 2;
  if (dtype == "Byte" || dtype == "Char" || dtype == "Bool" || dtype == "int8") return 1;
  return 0;
}

struct StepMark {
  int64_t step;
  double begin, end;  // microseconds
};

struct RawCollective {
  std::string name, group;
  int64_t bytes = -1, seq = -1;
  double begin = 0, end = 0;  // microseconds
  bool script = false;        // carries out a call of the script's own (collective_origin.h)
};

// Gathers the intervals the per-step numbers need; everything else is dropped as it streams.
class Collector {
 public:
  void Visit(const TraceEvent& e) {
    if (e.ph != 'X') return;  // only complete events carry durations we use
    if (!e.has_ts) {
      Warn(e, "event without \"ts\"; dropped");
      return;
    }
    if (!e.has_dur || !(e.dur > 0)) {
      if (e.has_dur && e.dur < 0) Warn(e, "negative duration; dropped");
      ++zero_or_missing_dur_;
      return;
    }
    ++used_;
    first_ts_ = std::min(first_ts_, e.ts);
    Interval iv{e.ts, e.ts + e.dur};
    last_end_ = std::max(last_end_, iv.end);
    std::string_view name = e.name;
    if (StartsWith(name, "ProfilerStep#")) {
      if (e.cat == "gpu_user_annotation") return;  // the GPU-side copy of the annotation
      int64_t n = 0;
      auto digits = name.substr(13);
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (ec != std::errc()) {
        Warn(e, "step annotation without a number; dropped");
        return;
      }
      steps_.push_back({n, iv.begin, iv.end});
      return;
    }
    // Annotations that repeat once per iteration, for traces without step annotations (they
    // are host ops as well, so no return).
    if (e.cat != "gpu_user_annotation") {
      if (StartsWith(name, "Optimizer.step#")) {
        optimizer_.push_back(iv);
      } else if (name == "DistributedDataParallel.forward") {
        ddp_forward_.push_back(iv);
      } else if (name == "## forward ##") {
        forward_.push_back(iv);
      } else if (name == "## backward ##" ||
                 StartsWith(name, "autograd::engine::evaluate_function: ")) {
        backward_starts_.push_back(iv.begin);
        autograd_.Add(iv);
      }
    }
    if (StartsWith(name, "enumerate(DataLoader)")) {
      input_.Add(iv);
      return;
    }
    const std::string_view cat = e.cat;
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      has_device_ = true;
      bool comm = cat == "kernel" && (StartsWith(name, "nccl") || !e.collective_name.empty());
      if (comm) {
        AddCollective(e, iv, &device_collectives_);
      } else {
        device_compute_.Add(iv);
      }
      return;
    }
    if (cat == "gpu_user_annotation" || cat == "cuda_runtime" || cat == "cuda_driver" ||
        cat == "Trace" || cat == "python_function" || cat == "cuda_sync") {
      return;
    }
    uint64_t thread = ThreadKey(e);
    if (StartsWith(name, "gloo:")) {
      comm_threads_[thread] = true;
      AddCollective(e, iv, &host_collectives_);
      return;
    }
    if (name == "record_param_comms" && !e.collective_name.empty()) {
      AddCollective(e, iv, &param_collectives_);
      return;
    }
    if (name.find("wait") != std::string_view::npos) return;
    if (StartsWith(name, "c10d::")) {
      // Where a collective was called (its run is a gloo worker's span or a kernel).
      std::string kind = CollectiveKind(name);
      if (!kind.empty()) launches_.push_back({std::move(kind), CallName(name), iv.begin});
      return;
    }
    if (cat.empty() || cat == "cpu_op" || cat == "user_annotation") {
      HostOps(thread).Add(iv);
    }
  }

  void Finish(ImportedTrace* out, const ImportOptions& opt) {
    out->format = has_device_ ? TraceFormat::kKinetoGpu : out->format;
    if (zero_or_missing_dur_ > 0) {
      ++out->warnings;
      if (out->warning_messages.size() < 20) {
        out->warning_messages.push_back(out->path + ": " + std::to_string(zero_or_missing_dur_) +
                                        " complete events with zero, negative or missing "
                                        "duration dropped");
      }
    }
    out->warnings += warnings_;
    for (auto& m : warnings_text_) {
      if (out->warning_messages.size() < 20) out->warning_messages.push_back(std::move(m));
    }

    std::vector<Interval> compute;
    std::vector<RawCollective>* collectives;
    std::vector<RawCollective>* runs;  // what the communication intervals are
    if (has_device_) {
      compute = device_compute_.Take();
      runs = collectives = &device_collectives_;
    } else {
      std::vector<Interval> host;
      for (auto& [thread, ivs] : host_ops_) {
        if (comm_threads_.count(thread)) continue;
        std::vector<Interval> u = ivs.Take();
        host.insert(host.end(), u.begin(), u.end());
      }
      compute = Union(std::move(host));
      if (!host_collectives_.empty()) {
        runs = &host_collectives_;
        // gloo's worker-thread events carry no process group or sequence number, and a worker
        // may start a collective later than the rank launched it. Where the launches
        // (record_param_comms) name their group or number, they are the collectives: matched
        // per group, arrival = launch. Not with unaligned clocks, which are matched by
        // collective durations, and a launch's duration is not the collective's.
        const bool launches_identify =
            out->clock != ClockKind::kUnaligned &&
            std::any_of(param_collectives_.begin(), param_collectives_.end(),
                        [](const RawCollective& r) { return !r.group.empty() || r.seq >= 0; });
        collectives = launches_identify ? &param_collectives_ : &host_collectives_;
      } else {
        runs = collectives = &param_collectives_;
      }
    }
    // The script's own collectives are not the gradient's communication: their runs leave the
    // communication intervals, and the time they block the step is counted apart (script_comm).
    const bool origin_known = MarkScriptCollectives();
    std::vector<Interval> comm, script;
    for (const RawCollective& r : *runs) (r.script ? script : comm).push_back({r.begin, r.end});
    comm = Union(std::move(comm));
    script = Union(std::move(script));
    collectives->erase(std::remove_if(collectives->begin(), collectives->end(),
                                      [](const RawCollective& r) { return r.script; }),
                       collectives->end());
    // Input (DataLoader) time is input wait, not compute, even where ops ran inside it.
    // Host traces: compute is host ops, so ops inside a DataLoader annotation are input.
    // Device traces: loading while the device computes costs nothing; only the loader time
    // during which the device was neither computing nor communicating is input wait.
    std::vector<Interval> input = input_.Take();
    if (has_device_) {
      std::vector<Interval> device = compute;
      device.insert(device.end(), comm.begin(), comm.end());
      input = Subtract(input, Union(std::move(device)));
    } else {
      compute = Subtract(compute, input);
    }
    std::vector<Interval> busy_both = Intersect(compute, comm);
    // Communication during input wait is hidden behind it, not exposed.
    std::vector<Interval> comm_in_input = Intersect(comm, input);
    std::vector<Interval> any;
    {
      std::vector<Interval> all = compute;
      all.insert(all.end(), comm.begin(), comm.end());
      // Device traces: idle is device idle (the host's input wait lies within it).
      if (!has_device_) all.insert(all.end(), input.begin(), input.end());
      any = Union(std::move(all));
    }
    const std::vector<Interval> script_blocked = Subtract(script, any);
    std::sort(collectives->begin(), collectives->end(),
              [](const RawCollective& a, const RawCollective& b) { return a.begin < b.begin; });

    std::sort(backward_starts_.begin(), backward_starts_.end());
    if (steps_.empty()) InferSteps(out);
    // Steps in order; a repeated step number keeps its first annotation.
    std::stable_sort(steps_.begin(), steps_.end(),
                     [](const StepMark& a, const StepMark& b) { return a.step < b.step; });
    size_t c = 0;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const StepMark& m = steps_[i];
      if (i > 0 && steps_[i - 1].step == m.step) {
        ++out->warnings;
        continue;
      }
      ImportedStep s;
      s.step = m.step;
      s.start = m.begin * 1e-6;
      s.end = m.end * 1e-6;
      double t = m.end - m.begin;
      s.compute = MeasureWithin(compute, m.begin, m.end) * 1e-6;
      s.comm_busy = MeasureWithin(comm, m.begin, m.end) * 1e-6;
      s.overlap = MeasureWithin(busy_both, m.begin, m.end) * 1e-6;
      s.exposed_comm = std::max(
          0.0, s.comm_busy - s.overlap - MeasureWithin(comm_in_input, m.begin, m.end) * 1e-6);
      s.idle = (t - MeasureWithin(any, m.begin, m.end)) * 1e-6;
      s.input_wait = MeasureWithin(input, m.begin, m.end) * 1e-6;
      s.host_bound = has_device_ && s.idle > opt.host_bound_idle_fraction * t * 1e-6;
      if (origin_known) {
        s.script_comm = MeasureWithin(script_blocked, m.begin, m.end) * 1e-6;
        auto l =
            std::lower_bound(launches_.begin(), launches_.end(), m.begin,
                             [](const CollectiveLaunch& a, double t0) { return a.begin < t0; });
        for (; l != launches_.end() && l->begin < m.end; ++l) {
          if (l->script) ++s.script_calls[l->name];
        }
      }
      // The first autograd function (or "## backward ##" annotation) within the step.
      auto backward = std::lower_bound(backward_starts_.begin(), backward_starts_.end(), m.begin);
      if (backward != backward_starts_.end() && *backward < m.end) {
        s.backward_start = *backward * 1e-6;
      }
      // Collectives arriving within the step (steps do not overlap in a sane trace).
      c = std::lower_bound(collectives->begin(), collectives->end(), m.begin,
                           [](const RawCollective& r, double t0) { return r.begin < t0; }) -
          collectives->begin();
      double last_end = m.begin;
      for (; c < collectives->size() && (*collectives)[c].begin < m.end; ++c) {
        const RawCollective& r = (*collectives)[c];
        s.collectives.push_back({r.name, r.group, r.bytes, r.seq, r.begin * 1e-6, r.end * 1e-6});
        last_end = std::max(last_end, r.end);
      }
      if (s.backward_start) {
        // Forward until backward begins; the optimizer after the last reduction has ended.
        s.forward = MeasureWithin(compute, m.begin, *backward) * 1e-6;
        s.optimizer = last_end > *backward
                          ? MeasureWithin(compute, std::min(last_end, m.end), m.end) * 1e-6
                          : 0.0;
        s.backward = std::max(0.0, s.compute - s.forward - s.optimizer);
      }
      out->steps.push_back(std::move(s));
    }
  }

  // No "ProfilerStep#N" annotations: steps from an annotation that repeats once per iteration
  // (the optimizer step, else the forward pass), else the whole trace as one step. Says which in
  // out->steps_from and in a warning.
  void InferSteps(ImportedTrace* out) {
    if (used_ == 0) return;
    auto by_begin = [](const Interval& a, const Interval& b) { return a.begin < b.begin; };
    std::string how;
    std::vector<Interval>& forward = ddp_forward_.empty() ? forward_ : ddp_forward_;
    if (!optimizer_.empty()) {
      // Step k ends where the k-th optimizer step ends; the first starts with the trace. What
      // follows the last optimizer step is an incomplete iteration and is left out.
      std::sort(optimizer_.begin(), optimizer_.end(), by_begin);
      double begin = first_ts_;
      for (const Interval& o : optimizer_) {
        if (o.end <= begin) continue;  // nested in or overlapping the previous one
        steps_.push_back({static_cast<int64_t>(steps_.size()), begin, o.end});
        begin = o.end;
      }
      out->steps_from = StepSource::kOptimizerStep;
      how =
          "\"Optimizer.step#...\" annotations (a step ends where one ends; the first starts "
          "with the trace)";
    } else if (!forward.empty()) {
      // Step k runs from the k-th forward pass's start to the next one's; the last to the end
      // of the trace.
      std::sort(forward.begin(), forward.end(), by_begin);
      std::vector<double> starts;
      double covered = -1e300;
      for (const Interval& f : forward) {
        if (f.begin < covered) continue;  // nested in the previous forward pass
        starts.push_back(f.begin);
        covered = f.end;
      }
      for (size_t i = 0; i < starts.size(); ++i) {
        const double end = i + 1 < starts.size() ? starts[i + 1] : last_end_;
        if (end > starts[i]) steps_.push_back({static_cast<int64_t>(i), starts[i], end});
      }
      out->steps_from = StepSource::kForward;
      how = std::string("\"") +
            (&forward == &ddp_forward_ ? "DistributedDataParallel.forward" : "## forward ##") +
            "\" annotations (a step starts where one starts; the last ends with the trace)";
    } else {
      steps_.push_back({0, first_ts_, last_end_});
      out->steps_from = StepSource::kWholeTrace;
    }
    ++out->warnings;
    if (out->steps_from == StepSource::kWholeTrace) {
      out->warning_messages.push_back(
          out->path +
          ": no \"ProfilerStep#N\" annotations and no annotation that repeats each iteration; "
          "the whole trace is analysed as one step (profile with torch.profiler.schedule and "
          "call prof.step() each iteration for per-step numbers)");
    } else {
      out->warning_messages.push_back(
          out->path + ": no \"ProfilerStep#N\" annotations; " + std::to_string(steps_.size()) +
          " step(s) inferred from " + how +
          "; profile with torch.profiler.schedule and call prof.step() each iteration for exact "
          "steps");
    }
  }

  // Marks the collectives the script called itself (collective_origin.h): in a DDP job's trace,
  // the launches outside DDP's forward, backward and the optimizer's step (where a
  // ZeroRedundancyOptimizer broadcasts), and the runs that carry them out. False where the trace
  // cannot tell: no launches, no backward pass to place them against, or a job other than DDP's
  // (a model-parallel job calls collectives of its own in its forward).
  bool MarkScriptCollectives() {
    std::vector<Interval> ddp = autograd_.Take();
    if (ddp.empty() || ddp_forward_.empty()) return false;
    ddp.insert(ddp.end(), ddp_forward_.begin(), ddp_forward_.end());
    ddp.insert(ddp.end(), optimizer_.begin(), optimizer_.end());
    ddp = Union(std::move(ddp));
    const auto by_begin = [](const CollectiveLaunch& a, const CollectiveLaunch& b) {
      return a.begin < b.begin;
    };
    std::vector<CollectiveLaunch> launched;  // record_param_comms: launches too
    for (const RawCollective& r : param_collectives_) {
      launched.push_back({CollectiveKind(r.name), CallName(r.name), r.begin});
    }
    MarkScriptLaunches(ddp, &launched);
    for (size_t i = 0; i < launched.size(); ++i) param_collectives_[i].script = launched[i].script;
    if (launches_.empty()) launches_ = std::move(launched);
    if (launches_.empty()) return false;
    std::stable_sort(launches_.begin(), launches_.end(), by_begin);
    MarkScriptLaunches(ddp, &launches_);
    const auto mark_runs = [&](std::vector<RawCollective>* runs, bool device) {
      std::vector<CollectiveRun> kinds;
      for (const RawCollective& r : *runs) kinds.push_back({CollectiveKind(r.name), r.begin});
      const std::vector<bool> script = ScriptRuns(launches_, kinds, device);
      for (size_t i = 0; i < runs->size(); ++i) (*runs)[i].script = script[i];
    };
    mark_runs(&host_collectives_, false);
    mark_runs(&device_collectives_, true);
    return true;
  }

  bool has_device() const { return has_device_; }
  double first_ts() const { return first_ts_; }
  void set_name(const std::string& name) { name_ = name; }

 private:
  static uint64_t ThreadKey(const TraceEvent& e) {
    uint64_t p =
        e.pid_str.empty() ? static_cast<uint64_t>(e.pid) : std::hash<std::string_view>()(e.pid_str);
    uint64_t t =
        e.tid_str.empty() ? static_cast<uint64_t>(e.tid) : std::hash<std::string_view>()(e.tid_str);
    return p * 0x9E3779B97F4A7C15ull ^ t;
  }
  IntervalUnion& HostOps(uint64_t thread) {
    if (last_ops_ == nullptr || thread != last_thread_) {
      last_thread_ = thread;
      last_ops_ = &host_ops_[thread];
    }
    return *last_ops_;
  }
  void Warn(const TraceEvent& e, const std::string& what) {
    ++warnings_;
    if (warnings_text_.size() < 10) {
      warnings_text_.push_back(name_ + ": byte " + std::to_string(e.byte_offset) + ": " + what);
    }
  }
  void AddCollective(const TraceEvent& e, const Interval& iv, std::vector<RawCollective>* out) {
    RawCollective r;
    if (!e.collective_name.empty()) {
      r.name = std::string(e.collective_name);
    } else {
      std::string_view n = e.name;
      r.name = std::string(n.substr(0, n.find('(')));
    }
    r.group = std::string(e.process_group);
    int db = DtypeBytes(e.dtype);
    if (e.in_msg_nelems >= 0 && db > 0) r.bytes = e.in_msg_nelems * db;
    r.seq = e.seq;
    r.begin = iv.begin;
    r.end = iv.end;
    out->push_back(std::move(r));
  }

  std::string name_;
  bool has_device_ = false;
  double first_ts_ = 1e300;
  double last_end_ = -1e300;
  uint64_t used_ = 0;
  uint64_t zero_or_missing_dur_ = 0;
  uint64_t warnings_ = 0;
  std::vector<std::string> warnings_text_;
  std::vector<StepMark> steps_;
  IntervalUnion input_, device_compute_;
  IntervalUnion autograd_;  // backward's autograd functions ("## backward ##" annotations)
  std::vector<CollectiveLaunch> launches_;  // c10d::..., where the collectives were called
  std::vector<Interval> optimizer_, ddp_forward_, forward_;  // per-iteration annotations
  std::vector<double> backward_starts_;  // microseconds: autograd functions, "## backward ##"
  std::vector<RawCollective> device_collectives_, host_collectives_, param_collectives_;
  std::map<uint64_t, IntervalUnion> host_ops_;
  uint64_t last_thread_ = 0;           // the thread of the last host op, and its intervals
  IntervalUnion* last_ops_ = nullptr;  // (map nodes do not move)
  std::map<uint64_t, bool> comm_threads_;
};

Result<ImportedTrace> Finish(Result<ReadStats> stats, Collector& col, StepscopeTraceCollector& own,
                             ImportedTrace out, const ImportOptions& opt) {
  if (!stats.ok()) return stats.status();
  out.bytes = stats->bytes;
  out.events = stats->events;
  out.warnings = stats->warnings;
  out.warning_messages = stats->warning_messages;
  if (own.found()) {
    out.rank_from_metadata = own.rank() >= 0 && !opt.rank;
    std::optional<int> rank = opt.rank;
    if (!rank && own.rank() >= 0) rank = static_cast<int>(own.rank());
    if (!rank) rank = RankFromFileName(out.path);
    if (!rank) {
      return Status::Error(out.path +
                           ": step events carry different pids and the file name has no "
                           "rank; pass the rank explicitly");
    }
    out.rank = *rank;
    out.world_size = opt.world_size.value_or(-1);
    own.Finish(&out);
    return out;
  }
  const nlohmann::json& meta = stats->metadata;
  out.format = stats->array_form ? TraceFormat::kLegacy : TraceFormat::kKinetoCpu;
  if (stats->array_form) {
    out.clock = ClockKind::kUnaligned;
  } else {
    out.clock =
        col.first_ts() > 1e15 && col.first_ts() < 1e300 ? ClockKind::kEpoch : ClockKind::kMonotonic;
  }
  std::optional<int> rank, world;
  if (meta.contains("distributedInfo") && meta["distributedInfo"].is_object()) {
    const auto& di = meta["distributedInfo"];
    if (di.contains("rank") && di["rank"].is_number_integer()) rank = di["rank"].get<int>();
    if (di.contains("world_size") && di["world_size"].is_number_integer()) {
      world = di["world_size"].get<int>();
    }
  }
  out.rank_from_metadata = rank.has_value() && !opt.rank;
  if (opt.rank) rank = opt.rank;
  if (!rank) rank = RankFromFileName(out.path);
  if (!rank) {
    rank = 0;
    ++out.warnings;
    out.warning_messages.push_back(out.path +
                                   ": no rank in distributedInfo or the file name; assuming 0 "
                                   "(pass the rank explicitly to override)");
  }
  out.rank = *rank;
  out.world_size = opt.world_size ? *opt.world_size : world.value_or(-1);
  col.Finish(&out, opt);
  if (out.steps.empty()) {
    ++out.warnings;
    out.warning_messages.push_back(out.path +
                                   ": no complete events with a duration, so no steps (is the "
                                   "trace empty or cut short?)");
  }
  return out;
}

}  // namespace

Result<ImportedTrace> ImportChromeTrace(const std::string& path, const ImportOptions& options) {
  Collector col;
  StepscopeTraceCollector own;
  col.set_name(path);
  ImportedTrace out;
  out.path = path;
  auto stats = ReadChromeTrace(path, [&](const TraceEvent& e) {
    col.Visit(e);
    own.Visit(e);
  });
  return Finish(std::move(stats), col, own, std::move(out), options);
}

Result<ImportedTrace> ImportTraceBuffer(std::string_view data, const std::string& name,
                                        const ImportOptions& options) {
  Collector col;
  StepscopeTraceCollector own;
  col.set_name(name);
  ImportedTrace out;
  out.path = name;
  auto stats = ReadChromeTraceBuffer(data, name, [&](const TraceEvent& e) {
    col.Visit(e);
    own.Visit(e);
  });
  return Finish(std::move(stats), col, own, std::move(out), options);
}

}  // namespace stepscope::trace
