#include "sweep/launcher.h"

#include <gtest/gtest.h>

namespace stepscope::sweep {
namespace {

TEST(SplitWords, BlanksQuotesAndEscapes) {
  auto w = SplitWords("  mpirun -np {n}  --mca btl 'self,vader' \"a b\" c\\ d ''");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, (std::vector<std::string>{"mpirun", "-np", "{n}", "--mca", "btl", "self,vader",
                                          "a b", "c d", ""}));
}

TEST(SplitWords, UnterminatedQuoteIsAnError) {
  auto w = SplitWords("srun -n {n} 'oops");
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("unterminated '"), std::string::npos);
}

TEST(Launcher, SubstitutesReplicasAndAppendsProgram) {
  auto l = Launcher::Parse("srun -n {n} --ntasks-per-node={n}");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->Argv(16, "/bin/stepscope", {"train", "--steps", "3"}),
            (std::vector<std::string>{"srun", "-n", "16", "--ntasks-per-node=16", "/bin/stepscope",
                                      "train", "--steps", "3"}));
}

TEST(Launcher, DefaultIsLocalOpenMpi) {
  auto l = Launcher::Parse(kDefaultLauncher);
  ASSERT_TRUE(l.ok());
  const auto argv = l->Argv(4, "p", {});
  EXPECT_EQ(argv[0], "mpirun");
  EXPECT_EQ(argv[2], "4");
  EXPECT_EQ(argv.back(), "p");
}

TEST(Launcher, HostsAndProcessesPerHost) {
  auto l = Launcher::Parse("torchrun --nnodes {nnodes} --nproc_per_node {nproc_per_node}");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->Argv(4, "t.py", {}), (std::vector<std::string>{"torchrun", "--nnodes", "1",
                                                              "--nproc_per_node", "4", "t.py"}));
  l->per_node = 8;
  EXPECT_EQ(l->Argv(4, "t.py", {})[2], "1");
  EXPECT_EQ(l->Argv(4, "t.py", {})[4], "4");
  EXPECT_EQ(l->Argv(20, "t.py", {})[2], "3");
  EXPECT_EQ(l->Argv(20, "t.py", {})[4], "8");
}

TEST(Launcher, AMisspeltPlaceholderIsRefusedAndShellVariablesStay) {
  Result<Launcher> typo = Launcher::Parse("srun -n {N}");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("launcher template: '{N}' in '{N}'"), std::string::npos);
  EXPECT_NE(typo.status().message().find("did you mean {n}?"), std::string::npos);
  auto l = Launcher::Parse("srun -n {n} --job-name=${SLURM_JOB_NAME} --x={{n}}");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->Argv(2, "p", {}),
            (std::vector<std::string>{"srun", "-n", "2", "--job-name=${SLURM_JOB_NAME}", "--x={n}",
                                      "p"}));
}

TEST(Launcher, EmptyTemplateIsRefused) { EXPECT_FALSE(Launcher::Parse("   ").ok()); }

TEST(QuoteCommand, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(QuoteCommand({"a", "b c", "it's", "--x=1,2"}), "a 'b c' 'it'\\''s' --x=1,2");
}

}  // namespace
}  // namespace stepscope::sweep
