#include "sweep/failure_cause.h"

#include <gtest/gtest.h>

namespace stepscope::sweep {
namespace {

ChildResult Exit(int code) {
  ChildResult r;
  r.exit_code = code;
  return r;
}

TEST(FailureCause, NamesTheRankOpenMpiSawDie) {
  const std::string log =
      "--------------------------------------------------------------------------\n"
      "Primary job  terminated normally, but 1 process returned\n"
      "a non-zero exit code. Per user-direction, the job has been aborted.\n"
      "--------------------------------------------------------------------------\n"
      "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).\n"
      "--------------------------------------------------------------------------\n";
  EXPECT_EQ(FailureCause(Exit(137), 0, log), "rank 1 on host vm died of signal 9 (Killed)");
}

// The end of a log of PyTorch's launcher (torch.distributed.run, PyTorch 1.13) whose rank 1 was
// killed (SIGKILL) at step 5 of a two-rank job, rank 0 failing at its next reduction.
const char* kTorchRankKilled =
    "RuntimeError: Got the following error when running the callback: RuntimeError: "
    "[./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:40144\n"
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
    "(pid: 22892) of binary: /usr/bin/python3\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "============================================================\n"
    "/tmp/hang/job.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "[1]:\n"
    "  time      : 2026-12-07_00:28:04\n"
    "  host      : localhost\n"
    "  rank      : 1 (local_rank: 1)\n"
    "  exitcode  : -9 (pid: 22893)\n"
    "  error_file: <N/A>\n"
    "  traceback : Signal 9 (SIGKILL) received by PID 22893\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2026-12-07_00:28:04\n"
    "  host      : localhost\n"
    "  rank      : 0 (local_rank: 0)\n"
    "  exitcode  : 1 (pid: 22892)\n"
    "  error_file: <N/A>\n"
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
    "============================================================\n";

TEST(FailureCause, TheRankPyTorchsLauncherSawKilledNotItsRootCause) {
  EXPECT_EQ(FailureCause(Exit(1), 0, kTorchRankKilled),
            "rank 1 (host localhost) died of signal 9 (SIGKILL)");
}

TEST(FailureCause, PyTorchsLauncherWithoutASignalNamesEveryFailedRankAndTheScriptsError) {
  // Rank 1 raised; the summary's root cause is rank 0, which lost its peer.
  std::string log =
      "    raise ValueError(\"bad batch at step 5\")\n"
      "ValueError: bad batch at step 5\n"
      "RuntimeError: Got the following error when running the callback: RuntimeError: "
      "[./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:41708\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
      "Failures:\n[1]:\n  host      : localhost\n  rank      : 1 (local_rank: 1)\n"
      "  exitcode  : 1 (pid: 23409)\n"
      "Root Cause (first observed failure):\n[0]:\n  host      : localhost\n"
      "  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 23408)\n"
      "============================================================\n";
  EXPECT_EQ(FailureCause(Exit(1), 0, log),
            "rank 1 (host localhost, exit 1), rank 0 (host localhost, exit 1) failed; the first "
            "error in the log: ValueError: bad batch at step 5");
  // The helper's line, written by the rank that raised, names it.
  log =
      "stepscope: rank 1 (host h): the script stopped at step 6 with ValueError: bad batch\n" + log;
  EXPECT_EQ(FailureCause(Exit(1), 0, log),
            "rank 1 (host h): the script stopped at step 6 with ValueError: bad batch");
}

TEST(FailureCause, StepscopesOwnRankMessageComesFirst) {
  const std::string log =
      "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\n"
      "stepscope: rank 0 (host vm): waited 3 s in an all-reduce at step 2; rank 1 stopped at "
      "step 2 (computing, silent for 3 s). Ending the job (--stall-timeout 3 s)\n";
  EXPECT_EQ(FailureCause(Exit(1), 0, log),
            "rank 0 (host vm): waited 3 s in an all-reduce at step 2; rank 1 stopped at step 2 "
            "(computing, silent for 3 s). Ending the job (--stall-timeout 3 s)");
  EXPECT_EQ(FailureCause(Exit(1), 0,
                         "stepscope train: 2 replica(s) on 1 host(s)\n"
                         "stepscope train: /o/rank-1.steps.jsonl: write failed (disk full?)\n"),
            "/o/rank-1.steps.jsonl: write failed (disk full?)");
}

TEST(FailureCause, TimeoutIsNamedWithTheLimit) {
  ChildResult r = Exit(143);
  r.timed_out = true;
  EXPECT_EQ(FailureCause(r, 20, ""),
            "no result after 20 s (--run-timeout): the run's process group was killed");
}

TEST(FailureCause, OtherwiseTheSignalOrTheLastLine) {
  EXPECT_EQ(FailureCause(Exit(137), 0, "something\n"), "the launcher died of signal 9 (Killed)");
  EXPECT_EQ(FailureCause(Exit(3), 0, "one\nlast words\n-----\n"), "exit 3: last words");
  EXPECT_EQ(FailureCause(Exit(3), 0, ""), "exit 3 with an empty log");
}

}  // namespace
}  // namespace stepscope::sweep
