// The run-queue clock: schedstat lines parse (and broken ones do not), and on this kernel the
// calling thread's delay reads, never decreases, and grows while another thread holds the only
// core both may run on.
#include "train/run_queue.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace stepscope::train {
namespace {

TEST(RunQueueDelay, ParsesTheSecondField) {
  EXPECT_DOUBLE_EQ(*ParseRunQueueDelay("123456789 2500000000 42\n"), 2.5);
  EXPECT_DOUBLE_EQ(*ParseRunQueueDelay("1 0 1"), 0.0);
  EXPECT_FALSE(ParseRunQueueDelay(""));
  EXPECT_FALSE(ParseRunQueueDelay("123"));
  EXPECT_FALSE(ParseRunQueueDelay("12 x 3"));
  EXPECT_FALSE(ParseRunQueueDelay("-1 -2 3"));
}

// Busy for `for_s` of wall time on the calling thread.
void Spin(double for_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(for_s);
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;
}

bool PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

TEST(RunQueueClock, GrowsWhileAnotherThreadHoldsTheCore) {
  RunQueueClock clock = RunQueueClock::ForThisThread();
  const auto first = clock.Read();
  if (!first) GTEST_SKIP() << "this kernel has no /proc/thread-self/schedstat";
  const int cpu = sched_getcpu();
  ASSERT_GE(cpu, 0);
  cpu_set_t before;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
  if (!PinToCpu(cpu)) GTEST_SKIP() << "this thread cannot be pinned to a core here";
  std::atomic<bool> stop{false};
  std::thread rival([&] {
    PinToCpu(cpu);
    while (!stop.load()) Spin(0.001);
  });
  Spin(0.3);  // shares one core with the rival: about half of it is spent waiting
  stop.store(true);
  rival.join();
  pthread_setaffinity_np(pthread_self(), sizeof(before), &before);
  const auto second = clock.Read();
  ASSERT_TRUE(second);
  EXPECT_GE(*second, *first);
  EXPECT_GT(*second - *first, 0.02) << "waited " << *second - *first << " s for the core";
}

TEST(CpuWait, SumsItsSpansAndIsUnknownWithoutAClock) {
  const RunQueueClock none;
  CpuWait unknown;
  unknown.Begin(none);
  unknown.End(none);
  EXPECT_FALSE(unknown.Total(1.0));
  EXPECT_FALSE(CpuWait().Total(1.0));
  const RunQueueClock clock = RunQueueClock::ForThisThread();
  if (!clock.Read()) GTEST_SKIP() << "this kernel has no /proc/thread-self/schedstat";
  CpuWait wait;
  for (int i = 0; i < 3; ++i) {
    wait.Begin(clock);
    Spin(0.002);
    wait.End(clock);
  }
  const auto total = wait.Total(0.006);
  ASSERT_TRUE(total);
  EXPECT_GE(*total, 0.0);
  EXPECT_LE(*total, 0.006);
  EXPECT_DOUBLE_EQ(*wait.Total(0.0), 0.0);  // never more than the compute it is part of
}

}  // namespace
}  // namespace stepscope::train
