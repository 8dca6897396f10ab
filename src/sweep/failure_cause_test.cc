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
