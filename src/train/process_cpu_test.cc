#include "train/process_cpu.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace stepscope::train {
namespace {

// Burns about `seconds` of CPU on the calling thread.
void SpinCpu(Seconds seconds) {
  const std::optional<Seconds> begin = ProcessCpuSeconds();
  ASSERT_TRUE(begin.has_value());
  volatile double x = 0;
  while (*ProcessCpuSeconds() - *begin < seconds) x = x + 1;
}

// The mean over the stretches added, and the CPU inside reductions passed in beside it. (Only a
// lower bound on the CPU: a sanitizer's runtime may use CPU of its own while the test sleeps.)
TEST(ProcessCpu, MeansOverTheStretchesAdded) {
  StepCpu cpu;
  EXPECT_FALSE(cpu.PerStretch().has_value());  // nothing added yet
  cpu.Mark();
  SpinCpu(0.02);
  cpu.Add(0.004);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  cpu.Add(0.0);
  ASSERT_TRUE(cpu.PerStretch().has_value());
  EXPECT_GE(cpu.PerStretch()->cpu, 0.01);
  ASSERT_TRUE(cpu.PerStretch()->in_reductions.has_value());
  EXPECT_DOUBLE_EQ(*cpu.PerStretch()->in_reductions, 0.002);
  // The stretches' wall time: at least the 20 ms of CPU and the 5 ms asleep, over two.
  EXPECT_GE(cpu.PerStretch()->wall, 0.0125);
}

TEST(ProcessCpu, CountsEveryThreadOfTheProcess) {
  StepCpu cpu;
  cpu.Mark();
  std::thread other([] { SpinCpu(0.02); });
  other.join();
  cpu.Add(std::nullopt);
  ASSERT_TRUE(cpu.PerStretch().has_value());
  EXPECT_GE(cpu.PerStretch()->cpu, 0.02);
  EXPECT_FALSE(cpu.PerStretch()->in_reductions.has_value());  // a clock that could not be read
}

TEST(ProcessCpu, AddWithoutAMarkIsUnknown) {
  StepCpu cpu;
  cpu.Add(0.0);
  cpu.Add(0.0);
  EXPECT_FALSE(cpu.PerStretch().has_value());
}

}  // namespace
}  // namespace stepscope::train
