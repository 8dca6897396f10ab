// The runner against a fake program (a shell script standing in for `stepscope train`), so these
// tests need no MPI: the launcher template is `env N={n}`.
#include "sweep/sweep_runner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sweep/run_records.h"

namespace stepscope::sweep {
namespace {
namespace fs = std::filesystem;

class SweepRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/stepscope-sweep-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    // Writes its arguments to RUNDIR/args and run.json at the end; "crash" exits 3;
    // "sleep" sleeps first.
    program_ = dir_ + "/fake-train.sh";
    std::ofstream(program_)
        << "#!/bin/sh\n"
           "out=''; prev=''\n"
           "for a in \"$@\"; do [ \"$prev\" = --out ] && out=$a; prev=$a; done\n"
           "echo \"N=$N $*\" > \"$out/args\"\n"
           "case \" $* \" in *' crash '*) echo boom-line; exit 3;; esac\n"
           "case \" $* \" in *' sleep '*) sleep 30;; esac\n"
           "case \" $* \" in *' noted '*) echo '{\"notes\": [\"one\", 2, \"two\"]}' > "
           "\"$out/run.json\"; exit 0;; esac\n"
           "echo '{}' > \"$out/run.json\"\n";
    chmod(program_.c_str(), 0755);
    options_.program = program_;
    options_.launcher = Launcher::Parse("env N={n}").value();
    options_.progress = nullptr;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir_, program_;
  SweepRunOptions options_;
};

TEST_F(SweepRunnerTest, AFinishedRunsNotesAreSaidUnderIt) {
  // The PyTorch helper's notes (run.json notes: batches it could not count, a backward it did
  // not see) reach the progress lines; what is not a note's text is left out.
  std::vector<Job> jobs{{"baseline-n1", 1, {"train", "noted"}}, {"baseline-n2", 2, {"train"}}};
  auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
  ASSERT_TRUE(store.ok()) << store.status().message();
  std::FILE* progress = std::tmpfile();
  ASSERT_NE(progress, nullptr);
  options_.progress = progress;
  SweepResult r = RunSweep(jobs, options_, &store.value(), nullptr);
  ASSERT_EQ(r.outcomes.size(), 2u);
  std::rewind(progress);
  std::string text;
  for (int c = std::fgetc(progress); c != EOF; c = std::fgetc(progress)) {
    text.push_back(static_cast<char>(c));
  }
  std::fclose(progress);
  const size_t finished = text.find("baseline-n1");
  ASSERT_NE(finished, std::string::npos) << text;
  EXPECT_NE(text.find("  note from the run: one\n  note from the run: two\n", finished),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("note from the run: 2"), std::string::npos) << text;
  EXPECT_EQ(text.find("note from the run", text.find("baseline-n2")), std::string::npos) << text;
}

TEST_F(SweepRunnerTest, RunsPersistsAndSkipsOnRerun) {
  std::vector<Job> jobs{{"baseline-n1", 1, {"train", "a"}}, {"baseline-n2", 2, {"train", "b"}}};
  {
    auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
    ASSERT_TRUE(store.ok()) << store.status().message();
    SweepResult r = RunSweep(jobs, options_, &store.value(), nullptr);
    ASSERT_EQ(r.outcomes.size(), 2u);
    EXPECT_EQ(r.outcomes[0].state, JobState::kFinished);
    EXPECT_EQ(r.outcomes[1].state, JobState::kFinished);
    std::string line;
    std::getline(std::ifstream(dir_ + "/s/runs/baseline-n2/args"), line);
    EXPECT_EQ(line, "N=2 train b --out " + dir_ + "/s/runs/baseline-n2");
  }
  auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
  ASSERT_TRUE(store.ok());
  jobs[1].args = {"train", "changed"};  // a changed run is not "finished"
  SweepResult r = RunSweep(jobs, options_, &store.value(), nullptr);
  EXPECT_EQ(r.outcomes[0].state, JobState::kSkipped);
  EXPECT_EQ(r.outcomes[1].state, JobState::kFinished);
}

// Extra arguments follow --out and, like it, are not part of a run's identity: a sweep resumed
// with other extra arguments skips what it finished.
TEST_F(SweepRunnerTest, ExtraArgumentsFollowOutAndDoNotChangeIdentity) {
  std::vector<Job> jobs{{"baseline-n1", 1, {"train", "a"}}};
  options_.extra_args = {"--emulate-device-file", "/x/device.json"};
  {
    auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
    ASSERT_TRUE(store.ok()) << store.status().message();
    ASSERT_EQ(RunSweep(jobs, options_, &store.value(), nullptr).outcomes[0].state,
              JobState::kFinished);
    std::string line;
    std::getline(std::ifstream(dir_ + "/s/runs/baseline-n1/args"), line);
    EXPECT_EQ(line, "N=1 train a --out " + dir_ + "/s/runs/baseline-n1" +
                        " --emulate-device-file /x/device.json");
  }
  options_.extra_args = {"--emulate-device-file", "/elsewhere/device.json"};
  auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(RunSweep(jobs, options_, &store.value(), nullptr).outcomes[0].state,
            JobState::kSkipped);
}

// A job that finds its run directory in the environment (a script under the helper): no --out
// appended, the job's own variables passed, and they are part of its identity on resume.
TEST_F(SweepRunnerTest, RunDirectoryInTheEnvironmentAndJobVariables) {
  program_ = dir_ + "/fake-script.sh";
  std::ofstream(program_) << "#!/bin/sh\n"
                             "echo \"$* V=$V\" > \"$RUN_DIR/args\"\n"
                             "[ \"$V\" = none ] || echo '{}' > \"$RUN_DIR/run.json\"\n";
  chmod(program_.c_str(), 0755);
  options_.program = program_;
  options_.out_env = "RUN_DIR";
  options_.no_marker_hint = [](const std::string& run_dir) {
    return "call the helper in " + run_dir.substr(run_dir.rfind('/') + 1);
  };
  std::vector<Job> jobs{{"a-n1", 1, {"x"}, {"V=1"}}, {"b-n1", 1, {"y"}, {"V=none"}}};
  {
    auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
    ASSERT_TRUE(store.ok());
    SweepResult r = RunSweep(jobs, options_, &store.value(), nullptr);
    EXPECT_EQ(r.outcomes[0].state, JobState::kFinished);
    std::string line;
    std::getline(std::ifstream(dir_ + "/s/runs/a-n1/args"), line);
    EXPECT_EQ(line, "x V=1");
    EXPECT_EQ(r.outcomes[1].state, JobState::kFailed);
    EXPECT_NE(r.outcomes[1].message.find("no run.json; call the helper in b-n1"),
              std::string::npos);
  }
  auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
  ASSERT_TRUE(store.ok());
  jobs[0].env = {"V=2"};  // another variable: another run
  EXPECT_EQ(RunSweep(jobs, options_, &store.value(), nullptr).outcomes[0].state,
            JobState::kFinished);
  EXPECT_EQ(RunSweep(jobs, options_, &store.value(), nullptr).outcomes[0].state,
            JobState::kSkipped);
}

TEST_F(SweepRunnerTest, FailedRunIsReportedAndTheSweepGoesOn) {
  auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
  ASSERT_TRUE(store.ok());
  std::vector<Job> jobs{{"a-n1", 1, {"crash"}}, {"b-n1", 1, {"fine"}}};
  SweepResult r = RunSweep(jobs, options_, &store.value(), nullptr);
  EXPECT_EQ(r.outcomes[0].state, JobState::kFailed);
  EXPECT_EQ(r.outcomes[0].exit_code, 3);
  EXPECT_NE(r.outcomes[0].log_tail.find("boom-line"), std::string::npos);
  EXPECT_EQ(r.outcomes[1].state, JobState::kFinished);
  EXPECT_EQ(store->Find("a-n1")->state, "failed");
  EXPECT_EQ(r.outcomes[0].cause, "exit 3: boom-line");
}

// --run-timeout: a run that hangs (here the fake program sleeps 30 s) is ended with its process
// group, counted as failed with the limit named (even had it written run.json on its way out),
// and the next runs go on.
TEST_F(SweepRunnerTest, RunOutlivingItsTimeoutIsEndedAndTheSweepGoesOn) {
  auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
  ASSERT_TRUE(store.ok());
  options_.run_timeout_s = 0.5;
  options_.before_ending = [](const std::string&, const Job&) {
    return std::string("where it was");
  };
  std::vector<Job> jobs{{"a-n1", 1, {"sleep"}}, {"b-n1", 1, {"fine"}}};
  SweepResult r = RunSweep(jobs, options_, &store.value(), nullptr);
  ASSERT_EQ(r.outcomes.size(), 2u);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(r.outcomes[0].state, JobState::kFailed);
  EXPECT_NE(r.outcomes[0].cause.find("(--run-timeout)"), std::string::npos) << r.outcomes[0].cause;
  EXPECT_TRUE(r.outcomes[0].cause.ends_with("; where it was")) << r.outcomes[0].cause;
  EXPECT_EQ(r.outcomes[1].state, JobState::kFinished);
  EXPECT_EQ(store->Find("a-n1")->state, "failed");
}

// An end reason (diagnose --start-timeout) ends a run that hangs as the timeout would, its words
// the cause, after the run's processes were asked where they are (once); the next runs go on.
TEST_F(SweepRunnerTest, AnEndReasonEndsTheRunAfterAskingWhereItWas) {
  auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
  ASSERT_TRUE(store.ok());
  std::vector<double> polled;
  options_.end_reason = [&](const std::string& run_dir, const Job& job, double elapsed_s) {
    EXPECT_EQ(run_dir, dir_ + "/s/runs/" + job.name);
    polled.push_back(elapsed_s);
    return job.args[0] == "sleep" && elapsed_s >= 1.5 ? std::string("stuck at its start")
                                                      : std::string();
  };
  int asked = 0;
  options_.before_ending = [&](const std::string&, const Job&) {
    ++asked;
    return std::string("rank 1 at train.py line 7 in load");
  };
  std::vector<Job> jobs{{"a-n1", 1, {"sleep"}}, {"b-n1", 1, {"fine"}}};
  SweepResult r = RunSweep(jobs, options_, &store.value(), nullptr);
  EXPECT_EQ(r.outcomes[0].state, JobState::kFailed);
  EXPECT_EQ(r.outcomes[0].cause, "stuck at its start; rank 1 at train.py line 7 in load");
  EXPECT_LT(r.outcomes[0].seconds, 20);  // not the 30 s the program sleeps
  EXPECT_EQ(asked, 1);
  ASSERT_GE(polled.size(), 1u);
  EXPECT_GE(polled.front(), 1.0);  // polled about once a second, not at every turn of the wait
  EXPECT_EQ(r.outcomes[1].state, JobState::kFinished);
}

TEST_F(SweepRunnerTest, MissingProgramFailsWithAMessage) {
  auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
  ASSERT_TRUE(store.ok());
  options_.launcher = Launcher::Parse("no-such-launcher-xyz -n {n}").value();
  SweepResult r = RunSweep({{"a-n1", 1, {}}}, options_, &store.value(), nullptr);
  EXPECT_EQ(r.outcomes[0].state, JobState::kFailed);
  EXPECT_NE(r.outcomes[0].message.find("no-such-launcher-xyz"), std::string::npos);
}

TEST_F(SweepRunnerTest, PendingInterruptRunsNothing) {
  auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
  ASSERT_TRUE(store.ok());
  InterruptGuard guard;
  std::vector<Job> jobs{{"a-n1", 1, {"fine"}}, {"b-n1", 1, {"sleep"}}, {"c-n1", 1, {"fine"}}};
  kill(getpid(), SIGINT);  // blocked by the guard: stays pending until the sweep looks
  SweepResult r = RunSweep(jobs, options_, &store.value(), &guard);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.signal, SIGINT);
  EXPECT_EQ(r.outcomes[0].state, JobState::kNotRun);
  EXPECT_EQ(r.outcomes[2].state, JobState::kNotRun);
}

TEST_F(SweepRunnerTest, InterruptKillsARunningChildGroup) {
  auto store = SweepStore::Open(dir_ + "/s", {"w"}, false);
  ASSERT_TRUE(store.ok());
  InterruptGuard guard;
  // The launcher itself sends the interrupt to this test process once the job is running.
  options_.launcher =
      Launcher::Parse("sh -c 'kill -INT " + std::to_string(getpid()) + "; exec \"$@\"' sh").value();
  std::vector<Job> jobs{{"a-n1", 1, {"sleep"}}, {"b-n1", 1, {"fine"}}};
  SweepResult r = RunSweep(jobs, options_, &store.value(), &guard);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.outcomes[0].state, JobState::kInterrupted);
  EXPECT_EQ(r.outcomes[1].state, JobState::kNotRun);
  EXPECT_FALSE(fs::exists(dir_ + "/s/runs/a-n1/run.json"));
  EXPECT_EQ(store->Find("a-n1"), nullptr);
}

TEST(SweepStore, RefusesAnotherWorkloadUnlessFresh) {
  char tmpl[] = "/tmp/stepscope-sweep-store-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  ASSERT_TRUE(SweepStore::Open(dir, {"--model", "gpt"}, false).ok());
  auto other = SweepStore::Open(dir, {"--model", "cnn"}, false);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("--fresh"), std::string::npos);
  EXPECT_TRUE(SweepStore::Open(dir, {"--model", "cnn"}, true).ok());
  fs::remove_all(dir);
}

TEST(FormatDuration, HoursMinutesSeconds) {
  EXPECT_EQ(FormatDuration(185), "3m05s");
  EXPECT_EQ(FormatDuration(42.4), "42s");
  EXPECT_EQ(FormatDuration(3725), "1h02m");
}

TEST(RunRecords, MissingFilesNameTheDirectory) {
  auto r = ReadRunRecords("/nonexistent-stepscope-dir");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent-stepscope-dir"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::sweep
