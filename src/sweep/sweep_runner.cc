#include "sweep/sweep_runner.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "sweep/failure_cause.h"
#include "sweep/run_records.h"
#include "sweep/sweep_eta.h"

namespace stepscope::sweep {

const char* ToString(JobState state) {
  switch (state) {
    case JobState::kFinished:
      return "finished";
    case JobState::kSkipped:
      return "skipped (already finished)";
    case JobState::kFailed:
      return "failed";
    case JobState::kInterrupted:
      return "interrupted";
    case JobState::kNotRun:
      return "not run";
  }
  return "?";
}

std::vector<std::string> Job::Identity() const {
  std::vector<std::string> words = env;
  words.insert(words.end(), args.begin(), args.end());
  return words;
}

std::string FormatDuration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

SweepResult RunSweep(const std::vector<Job>& jobs, const SweepRunOptions& options,
                     SweepStore* store, InterruptGuard* guard) {
  SweepResult result;
  auto say = [&](const std::string& line) {
    if (options.progress != nullptr) {
      std::fputs(line.c_str(), options.progress);
      std::fflush(options.progress);
    }
  };
  const size_t k = jobs.size();
  std::map<std::string, RunDuration> durations;  // of the finished runs, read once each
  auto finished_durations = [&] {
    std::vector<RunDuration> out;
    for (const StoredRun& r : store->runs()) {
      if (r.state != "finished") continue;
      auto it = durations.find(r.name);
      if (it == durations.end() || it->second.seconds != r.seconds) {
        RunDuration d = MeasureRunDuration(r, store->RunDir(r.name));
        if (options.timing_class) d.timing_class = options.timing_class(r.name);
        it = durations.insert_or_assign(r.name, std::move(d)).first;
      }
      out.push_back(it->second);
    }
    return out;
  };
  std::vector<std::string> classes;
  for (const Job& job : jobs) {
    classes.push_back(options.timing_class ? options.timing_class(job.name) : std::string());
  }
  for (size_t i = 0; i < k; ++i) {
    JobOutcome out;
    out.job = jobs[i];
    out.run_dir = store->RunDir(jobs[i].name);
    if (result.interrupted || (guard != nullptr && guard->Interrupted())) {
      result.interrupted = true;
      result.outcomes.push_back(std::move(out));
      continue;
    }
    const std::string head = fmt::format("[run {}/{}] {} ({} replica{})", i + 1, k, jobs[i].name,
                                         jobs[i].replicas, jobs[i].replicas == 1 ? "" : "s");
    const std::vector<std::string> identity = jobs[i].Identity();
    if (store->Finished(jobs[i].name, identity)) {
      out.state = JobState::kSkipped;
      out.seconds = store->Find(jobs[i].name)->seconds;
      say(head + ": already finished, skipped\n");
      result.outcomes.push_back(std::move(out));
      continue;
    }
    const double eta = EstimateRemainingSeconds(jobs, i, finished_durations(), classes);
    say(head + (eta > 0
                    ? fmt::format(": running, about {} left in the sweep\n", FormatDuration(eta))
                    : std::string(": running\n")));
    std::vector<std::string> args = jobs[i].args;
    std::vector<std::string> env = options.extra_env;
    env.insert(env.end(), jobs[i].env.begin(), jobs[i].env.end());
    if (options.out_env.empty()) {
      args.push_back("--out");
      args.push_back(out.run_dir);
    } else {
      env.push_back(options.out_env + "=" + std::filesystem::absolute(out.run_dir).string());
    }
    args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
    const std::vector<std::string> argv =
        options.launcher.Argv(jobs[i].replicas, options.program, args);
    StoredRun stored{jobs[i].name, jobs[i].replicas, identity, "failed", 0, 0};
    if (Status st = store->PrepareRun(jobs[i].name); !st.ok()) {
      out.state = JobState::kFailed;
      out.message = st.message();
      out.cause = out.message;
    } else {
      const std::string log = out.run_dir + "/log.txt";
      Result<ChildProcess> child = ChildProcess::Start(argv, env, log);
      if (!child.ok()) {
        out.state = JobState::kFailed;
        out.message = child.status().message();
        out.cause = out.message;
        out.exit_code = 127;
      } else {
        WaitHooks hooks;
        if (options.end_reason) {
          hooks.end_reason = [&](double elapsed_s) {
            return options.end_reason(out.run_dir, jobs[i], elapsed_s);
          };
        }
        if (options.before_ending) {
          hooks.before_end = [&] { return options.before_ending(out.run_dir, jobs[i]); };
        }
        const ChildResult r = child->Wait(guard, 5.0, options.run_timeout_s, hooks);
        out.seconds = r.seconds;
        out.exit_code = r.exit_code;
        bool marker = std::filesystem::exists(out.run_dir + "/run.json");
        if (!r.interrupted && r.exit_code == 0 && !marker && options.complete_run) {
          if (Status st = options.complete_run(out.run_dir, jobs[i]); !st.ok()) {
            out.message = st.message();
          }
          marker = std::filesystem::exists(out.run_dir + "/run.json");
        }
        if (r.interrupted) {
          // run.json is written last: a run that got that far is kept even if stopped on exit.
          out.state = marker ? JobState::kFinished : JobState::kInterrupted;
          result.interrupted = true;
        } else if (r.exit_code == 0 && marker && !r.timed_out && r.ended_because.empty()) {
          out.state = JobState::kFinished;
        } else {
          out.state = JobState::kFailed;
          if (r.exit_code == 0 && !r.timed_out && r.ended_because.empty() && out.message.empty()) {
            const std::string hint =
                options.no_marker_hint ? options.no_marker_hint(out.run_dir) : "";
            out.message = "exited 0 but wrote no run.json" + (hint.empty() ? "" : "; " + hint);
          }
        }
        if (out.state == JobState::kFailed) {
          out.log_tail = TailOfFile(log, options.log_tail_lines);
          const std::string log_text = TailOfFile(log, 400);
          out.cause = !out.message.empty()       ? out.message
                      : !r.ended_because.empty() ? r.ended_because
                                                 : FailureCause(r, options.run_timeout_s, log_text);
          if (!r.before_end.empty()) out.cause += "; " + r.before_end;
          // A full disk leaves nothing in the log to tell it: say so when it is the case.
          if (const std::string full = FullDiskCause(out.run_dir); !full.empty()) {
            out.cause = log_text.empty() ? full : out.cause + "; " + full;
          }
        }
      }
    }
    stored.seconds = out.seconds;
    stored.exit_code = out.exit_code;
    if (out.state == JobState::kFinished) stored.state = "finished";
    if (out.state != JobState::kInterrupted) {
      if (Status st = store->Record(stored); !st.ok()) say("warning: " + st.message() + "\n");
    }
    if (out.state == JobState::kFinished) {
      say(fmt::format("{}: finished in {}\n", head, FormatDuration(out.seconds)));
      for (const std::string& note : ReadRunNotes(out.run_dir)) {
        say(fmt::format("  note from the run: {}\n", note));
      }
    } else if (out.state == JobState::kFailed) {
      say(fmt::format(
          "{}: FAILED (exit {}): {}; the sweep goes on. Command:\n  {}{}\n{}", head, out.exit_code,
          out.cause, jobs[i].env.empty() ? "" : QuoteCommand(jobs[i].env) + " ", QuoteCommand(argv),
          out.log_tail.empty()
              ? fmt::format("its log, {}/log.txt, is empty\n", out.run_dir)
              : fmt::format("last lines of {}/log.txt:\n{}", out.run_dir, out.log_tail)));
    } else if (out.state == JobState::kInterrupted) {
      say(fmt::format("{}: interrupted; its process group was stopped\n", head));
    }
    result.outcomes.push_back(std::move(out));
  }
  if (guard != nullptr) result.signal = guard->signal();
  return result;
}

}  // namespace stepscope::sweep
