#include "train/process_cpu.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace stepscope::train {
namespace {

// Burns about `seconds` of CPU on the calling thread.
void Spin(Seconds seconds) {
  const std::optional<Seconds> begin = ProcessCpuSeconds();
  ASSERT_TRUE(begin.has_value());
  volatile double x = 0;
  while (*ProcessCpuSeconds() - *begin < seconds) x = x + 1;
}

TEST(ProcessCpu, CountsWorkAndNotSleep) {
  StepCpu cpu;
  EXPECT_FALSE(cpu.PerStretch().has_value());  // nothing added yet
  cpu.Mark();
  Spin(0.02);
  cpu.Add();
  // A stretch that sleeps uses next to no CPU, so the mean over two is about half the spin.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  cpu.Add();
  ASSERT_TRUE(cpu.PerStretch().has_value());
  EXPECT_GE(*cpu.PerStretch(), 0.01);
  EXPECT_LT(*cpu.PerStretch(), 0.02);
}

TEST(ProcessCpu, CountsEveryThreadOfTheProcess) {
  StepCpu cpu;
  cpu.Mark();
  std::thread other([] { Spin(0.02); });
  other.join();
  cpu.Add();
  ASSERT_TRUE(cpu.PerStretch().has_value());
  EXPECT_GE(*cpu.PerStretch(), 0.02);
}

TEST(ProcessCpu, AddWithoutAMarkIsUnknown) {
  StepCpu cpu;
  cpu.Add();
  cpu.Add();
  EXPECT_FALSE(cpu.PerStretch().has_value());
}

}  // namespace
}  // namespace stepscope::train
