// The fault handler's dump read back, and processes asked through their process files: shell
// processes stand in for the script's ranks (one writes a dump when sent SIGUSR2, one ignores the
// signal), beside a process that has ended and one on another host.
#include "sweep/process_stacks.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sweep/child_process.h"

namespace stepscope::sweep {
namespace {
namespace fs = std::filesystem;

// As Python 3.11's faulthandler writes it (all threads, the signalled one marked current).
constexpr char kDump[] =
    "Thread 0x00007f0762e116c0 (most recent call first):\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 327 in wait\n"
    "  File \"/job/loader.py\", line 12 in worker\n"
    "\n"
    "Current thread 0x00007f0763c57b80 (most recent call first):\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 862 "
    "in _new_process_group_helper\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 761 "
    "in init_process_group\n"
    "  File \"/job/train.py\", line 45 in setup\n"
    "  File \"/job/train.py\", line 90 in <module>\n";

TEST(ThreadFrames, TheWantedThreadInnermostFirst) {
  const std::vector<StackFrame> main = ThreadFrames(kDump, "0x00007f0763c57b80");
  ASSERT_EQ(main.size(), 4u);
  EXPECT_EQ(main[0].file, "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py");
  EXPECT_EQ(main[0].line, 862);
  EXPECT_EQ(main[0].function, "_new_process_group_helper");
  EXPECT_EQ(main[3].function, "<module>");
  const std::vector<StackFrame> other = ThreadFrames(kDump, "0x7f0762e116c0");  // no leading 0s
  ASSERT_EQ(other.size(), 2u);
  EXPECT_EQ(other[1].file, "/job/loader.py");
  // Asked twice: the file holds two dumps, and the later one is where the thread is now.
  const std::string twice = std::string(kDump) +
                            "Current thread 0x00007f0763c57b80 (most recent call first):\n"
                            "  File \"/job/train.py\", line 50 in step\n";
  const std::vector<StackFrame> now = ThreadFrames(twice, "0x00007f0763c57b80");
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].line, 50);
  EXPECT_TRUE(ThreadFrames(kDump, "0x1").empty());
  EXPECT_TRUE(ThreadFrames(kDump, "").empty());
  EXPECT_TRUE(ThreadFrames("not a dump\n", "0x00007f0763c57b80").empty());
}

TEST(WhereInScript, TheScriptsFrameAndWhereInsideItWaits) {
  const std::vector<StackFrame> main = ThreadFrames(kDump, "0x00007f0763c57b80");
  // The script's line and the call it made, not the library's innermost frame.
  EXPECT_EQ(WhereInScript(main),
            "train.py line 45 in setup, inside init_process_group (distributed_c10d.py line 761)");
  EXPECT_EQ(WhereInScript({main.begin() + 2, main.end()}), "train.py line 45 in setup");
  // Nothing of the script's own (a library's thread): the innermost frame.
  EXPECT_EQ(WhereInScript({main[0]}), "distributed_c10d.py line 862 in _new_process_group_helper");
  EXPECT_EQ(WhereInScript({{"/x/python/stepscope_torch/session.py", 7, "wrap"}}),
            "session.py line 7 in wrap");
  // The helper's loader between the script and PyTorch's is seen through.
  EXPECT_EQ(WhereInScript(
                {{"/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py", 628, "__next__"},
                 {"/x/python/stepscope_torch/loader.py", 88, "__iter__"},
                 {"/job/train.py", 60, "main"}}),
            "train.py line 60 in main, inside __next__ (dataloader.py line 628)");
  EXPECT_EQ(WhereInScript({}), "");
}

class AskProcessesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/stepscope-stacks-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    host_ = name;
  }
  void TearDown() override {
    for (pid_t pid : children_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    fs::remove_all(dir_);
  }
  // A shell process that runs `script`; its process file names it with `rank` and thread 0x1.
  pid_t Start(const std::string& script, int rank, const std::string& host) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    children_.push_back(pid);
    const std::string stem = dir_ + "/process-" + host + "-" + std::to_string(pid);
    std::ofstream(stem + ".stacks.txt");
    std::ofstream(stem + ".json") << "{\"pid\": " << pid << ", \"host\": \"" << host
                                  << "\", \"rank\": " << rank
                                  << ", \"main_thread\": \"0x0000000000000001\", \"stacks\": "
                                     "\"process-"
                                  << host << "-" << pid << ".stacks.txt\"}";
    return pid;
  }
  std::string dir_, host_;
  std::vector<pid_t> children_;
};

TEST_F(AskProcessesTest, EachProcessAnswersOrIsSaidNotTo) {
  const std::string dump = dir_ + "/process-" + host_ + "-$$.stacks.txt";
  Start(
      "trap 'printf \"Current thread 0x0000000000000001 (most recent call first):\\n  File "
      "\\\"/job/train.py\\\", line 7 in load\\n\" > " +
          dump + "' USR2; while :; do sleep 0.05; done",
      1, host_);
  Start("trap '' USR2; while :; do sleep 0.05; done", 0, host_);
  Start("true", 2, host_);
  waitpid(children_.back(), nullptr, 0);  // ended: its pid is gone
  children_.pop_back();
  Start("while :; do sleep 0.05; done", 3, "another-host");
  // SIGUSR2 is this one's own (its process file has no stacks): never sent it, or it would end.
  const pid_t own = Start("while :; do sleep 0.05; done", 4, host_);
  std::ofstream(dir_ + "/process-" + host_ + "-" + std::to_string(own) + ".json")
      << "{\"pid\": " << own << ", \"host\": \"" << host_
      << "\", \"rank\": 4, \"main_thread\": \"0x1\", \"stacks\": null}";
  usleep(200 * 1000);  // the traps are set
  std::ofstream(dir_ + "/process-broken.json") << "{not json";

  const std::vector<ProcessPlace> places = AskProcesses(dir_, 1.0);
  ASSERT_EQ(places.size(), 5u);
  EXPECT_EQ(places[4].answer, ProcessPlace::Answer::kNotArmed);
  EXPECT_EQ(waitpid(own, nullptr, WNOHANG), 0);  // still running: not signalled
  EXPECT_EQ(places[0].rank, 0);
  EXPECT_EQ(places[0].answer, ProcessPlace::Answer::kNoAnswer);
  EXPECT_EQ(places[1].rank, 1);
  ASSERT_EQ(places[1].answer, ProcessPlace::Answer::kAnswered);
  ASSERT_EQ(places[1].main_frames.size(), 1u);
  EXPECT_EQ(places[1].main_frames[0].function, "load");
  EXPECT_EQ(places[2].answer, ProcessPlace::Answer::kGone);
  EXPECT_EQ(places[3].answer, ProcessPlace::Answer::kOtherHost);

  const std::string words = DescribePlaces(places, dir_);
  EXPECT_NE(words.find("rank 1 (pid " + std::to_string(places[1].pid) + ", host " + host_ +
                       ") at train.py line 7 in load"),
            std::string::npos)
      << words;
  EXPECT_NE(words.find("rank 0 (pid"), std::string::npos);
  EXPECT_NE(words.find("did not answer"), std::string::npos);
  EXPECT_NE(words.find("had ended"), std::string::npos);
  EXPECT_NE(words.find("another host: not asked"), std::string::npos);
  EXPECT_NE(words.find("rank 4 (pid " + std::to_string(own) + ", host " + host_ +
                       ") was not asked (SIGUSR2 is the script's own)"),
            std::string::npos);
  EXPECT_NE(words.find(dir_ + "/process-*.stacks.txt"), std::string::npos);
  EXPECT_EQ(words.find("had not imported"), std::string::npos);
  // The job's ranks without a process file had not imported the helper when asked.
  const std::string six = DescribePlaces(places, dir_, 6);
  EXPECT_TRUE(
      six.ends_with("the script's own); rank 5 had not imported stepscope_torch yet; "
                    "every thread's stack in " +
                    dir_ + "/process-*.stacks.txt"))
      << six;
  EXPECT_EQ(DescribePlaces({}, dir_, 2),
            "where the script's processes were when asked: rank 0 had not imported stepscope_torch "
            "yet; rank 1 had not imported stepscope_torch yet");
  // A process of unknown rank (its launcher set none) may be any of them: none is said missing.
  std::vector<ProcessPlace> unknown{places[1]};
  unknown[0].rank.reset();
  EXPECT_EQ(DescribePlaces(unknown, dir_, 2).find("had not imported"), std::string::npos);
  EXPECT_EQ(DescribePlaces({}, dir_), "");
}

}  // namespace
}  // namespace stepscope::sweep
