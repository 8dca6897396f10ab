// The watchdog against a test clock: a wait in a collective or for input that reaches the stall
// timeout ends the job with a message naming the step and the ranks behind; computing for long
// never does; destruction does not wait for a check. The watchdog's thread reads what the
// training thread publishes, so scripts/sanitize.sh runs these under ThreadSanitizer.
#include "train/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace stepscope::train {
namespace {

using comm::HeartbeatEntry;
using comm::HeartbeatPhase;

// A job whose clock the test moves and whose end is recorded instead of taken.
class FakeJob {
 public:
  WatchdogHooks Hooks() {
    WatchdogHooks hooks;
    hooks.now = [this] { return now_.load(); };
    hooks.publish = [this](int64_t, HeartbeatPhase) { published_.fetch_add(1); };
    hooks.heartbeats = [this] {
      std::lock_guard<std::mutex> lock(mu_);
      return heartbeats_;
    };
    hooks.abort = [this](const std::string& message) {
      std::lock_guard<std::mutex> lock(mu_);
      if (message_.empty()) message_ = message;
      cv_.notify_all();
    };
    return hooks;
  }
  void Advance(Seconds s) { now_.store(now_.load() + s); }
  void SetHeartbeats(std::vector<HeartbeatEntry> entries) {
    std::lock_guard<std::mutex> lock(mu_);
    heartbeats_ = std::move(entries);
  }
  // The message the job ended with, waiting for it at most `patience` (a guard against a hang,
  // not a timing assertion).
  std::string AwaitAbort(std::chrono::seconds patience = std::chrono::seconds(60)) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, patience, [&] { return !message_.empty(); });
    return message_;
  }
  std::string MessageNow() {
    std::lock_guard<std::mutex> lock(mu_);
    return message_;
  }
  int published() const { return published_.load(); }

 private:
  std::atomic<double> now_{1000.0};
  std::atomic<int> published_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<HeartbeatEntry> heartbeats_;
  std::string message_;
};

HeartbeatEntry Entry(int rank, int64_t step, HeartbeatPhase phase, Seconds time) {
  HeartbeatEntry e;
  e.world_rank = rank;
  e.local_rank = rank;
  e.step = step;
  e.phase = phase;
  e.time = time;
  return e;
}

TEST(Watchdog, AStalledAllreduceEndsTheJobNamingTheRankBehind) {
  FakeJob job;
  job.SetHeartbeats({Entry(0, 7, HeartbeatPhase::kAllreduce, 1000.0),
                     Entry(1, 6, HeartbeatPhase::kCompute, 990.0)});
  Watchdog watchdog(job.Hooks(), 0.2);
  watchdog.Publish(7, HeartbeatPhase::kAllreduce);
  EXPECT_EQ(job.published(), 1);
  job.Advance(30);
  const std::string message = job.AwaitAbort();
  EXPECT_NE(message.find("in an all-reduce at step 7"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 1 stopped at step 6 (computing, silent for 40 s)"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("rank 0 stopped"), std::string::npos) << message;
  EXPECT_NE(message.find("(--stall-timeout 0.2 s)"), std::string::npos) << message;
}

TEST(Watchdog, AStalledInputWaitNamesTheInputPipeline) {
  FakeJob job;
  Watchdog watchdog(job.Hooks(), 0.2);
  watchdog.Publish(3, HeartbeatPhase::kInput);
  job.Advance(5);
  const std::string message = job.AwaitAbort();
  EXPECT_NE(message.find("for a batch at step 3"), std::string::npos) << message;
  EXPECT_NE(message.find("input pipeline"), std::string::npos) << message;
}

TEST(Watchdog, ComputingForLongAndShortWaitsNeverEndTheJob) {
  FakeJob job;
  {
    Watchdog watchdog(job.Hooks(), 0.2);
    // A long computation: the clock moves far past the timeout while the rank computes.
    watchdog.Publish(1, HeartbeatPhase::kCompute);
    job.Advance(100);
    // Many short collectives, each under the timeout, on the training thread while the
    // watchdog's thread checks.
    for (int step = 2; step < 2000; ++step) {
      watchdog.Publish(step, HeartbeatPhase::kAllreduce);
      job.Advance(0.05);
      watchdog.Publish(step, HeartbeatPhase::kCompute);
      job.Advance(1.0);
    }
  }
  EXPECT_EQ(job.MessageNow(), "");
  EXPECT_EQ(job.published(), 1 + 2 * 1998);
}

TEST(Watchdog, DestructionDoesNotWaitForTheNextCheck) {
  FakeJob job;
  // A check period of one second: destruction must wake the thread rather than sleep it out;
  // a hang here fails the test by its ctest timeout.
  for (int i = 0; i < 20; ++i) {
    Watchdog watchdog(job.Hooks(), 3600);
    watchdog.Publish(i, HeartbeatPhase::kAllreduce);
  }
  EXPECT_EQ(job.MessageNow(), "");
}

TEST(StallMessage, OnlyWaitsAtTheTimeoutAreStalls) {
  const std::vector<HeartbeatEntry> none;
  EXPECT_FALSE(StallMessage({5, HeartbeatPhase::kAllreduce, 9.9}, 10, 0, none));
  EXPECT_TRUE(StallMessage({5, HeartbeatPhase::kAllreduce, 10.0}, 10, 0, none));
  EXPECT_TRUE(StallMessage({5, HeartbeatPhase::kInput, 11}, 10, 0, none));
  for (HeartbeatPhase phase : {HeartbeatPhase::kStarting, HeartbeatPhase::kCompute,
                               HeartbeatPhase::kIdle, HeartbeatPhase::kDone}) {
    EXPECT_FALSE(StallMessage({5, phase, 1e6}, 10, 0, none));
  }
}

TEST(StallMessage, WithNoLocalRankBehindItBlamesAnotherHost) {
  // Both local ranks wait in the collective at the furthest step; one that finished is not
  // named either.
  const auto message = StallMessage(
      {4, HeartbeatPhase::kAllreduce, 20}, 10, 100,
      {Entry(0, 4, HeartbeatPhase::kAllreduce, 80), Entry(1, 4, HeartbeatPhase::kAllreduce, 80),
       Entry(2, 9, HeartbeatPhase::kDone, 50)});
  ASSERT_TRUE(message);
  EXPECT_NE(message->find("a rank on another host did not arrive"), std::string::npos) << *message;
}

TEST(StallMessage, NamesARankStoppedInsideTheCollectiveByItsStaleBeat) {
  // Both ranks arrived at the collective; rank 1's process was then stopped, so its watchdog's
  // beat is 9 s old against rank 0's fresh one. Half the 10 s timeout is the limit.
  auto zero = Entry(0, 4, HeartbeatPhase::kAllreduce, 80);
  auto one = Entry(1, 4, HeartbeatPhase::kAllreduce, 80);
  zero.alive = 99.5;
  one.alive = 91;
  const auto message = StallMessage({4, HeartbeatPhase::kAllreduce, 20}, 10, 100, {zero, one});
  ASSERT_TRUE(message);
  EXPECT_NE(message->find("rank 1 stopped at step 4 (in an all-reduce, silent for 9 s)"),
            std::string::npos)
      << *message;
  EXPECT_EQ(message->find("rank 0 stopped"), std::string::npos) << *message;
  EXPECT_EQ(message->find("another host"), std::string::npos) << *message;
  one.alive = 95.5;
  const auto beating = StallMessage({4, HeartbeatPhase::kAllreduce, 20}, 10, 100, {zero, one});
  ASSERT_TRUE(beating);
  EXPECT_NE(beating->find("a rank on another host did not arrive"), std::string::npos) << *beating;
}

TEST(Watchdog, BeatsWhileTheTrainingThreadWaits) {
  FakeJob job;
  std::atomic<int> beats{0};
  WatchdogHooks hooks = job.Hooks();
  hooks.beat = [&beats] { beats.fetch_add(1); };
  {
    Watchdog watchdog(std::move(hooks), 0.2);
    watchdog.Publish(1, HeartbeatPhase::kAllreduce);
    // At least the first beat and one after a check period; a hang fails by the ctest timeout.
    while (beats.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(beats.load(), 2);
}

TEST(Watchdog, AWaitThroughItsOwnSuspensionStartsAgain) {
  // The watchdog's thread is held for 0.5 s (as by SIGSTOP) while the job's clock moves 30 s:
  // that wait is not a stall; the same wait growing afterwards is.
  FakeJob job;
  std::atomic<int> beats{0};
  WatchdogHooks hooks = job.Hooks();
  hooks.beat = [&beats, &job] {
    if (beats.fetch_add(1) == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      job.Advance(30);
    }
  };
  Watchdog watchdog(std::move(hooks), 0.2);
  watchdog.Publish(5, HeartbeatPhase::kAllreduce);
  while (beats.load() < 6) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(job.MessageNow(), "");
  job.Advance(1);
  EXPECT_NE(job.AwaitAbort().find("waited 1 s in an all-reduce at step 5"), std::string::npos)
      << job.MessageNow();
}

TEST(StallMessage, NamesEveryRankBehindInRankOrder) {
  const auto message = StallMessage(
      {8, HeartbeatPhase::kAllreduce, 15}, 10, 200,
      {Entry(0, 8, HeartbeatPhase::kAllreduce, 185), Entry(1, 7, HeartbeatPhase::kInput, 150),
       Entry(2, 8, HeartbeatPhase::kCompute, 190), Entry(3, -1, HeartbeatPhase::kStarting, 100)});
  ASSERT_TRUE(message);
  const size_t one = message->find("rank 1 stopped at step 7 (waiting for input, silent for 50 s)");
  const size_t two = message->find("rank 2 stopped at step 8 (computing, silent for 10 s)");
  const size_t three = message->find("rank 3 stopped at step -1 (starting, silent for 100 s)");
  ASSERT_NE(one, std::string::npos) << *message;
  ASSERT_NE(two, std::string::npos) << *message;
  ASSERT_NE(three, std::string::npos) << *message;
  EXPECT_LT(one, two);
  EXPECT_LT(two, three);
}

}  // namespace
}  // namespace stepscope::train
