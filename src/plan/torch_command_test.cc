#include "plan/torch_command.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "plan/run_plan.h"

namespace stepscope::plan {
namespace {

using Words = std::vector<std::string>;

TorchCommand Command(Words words) { return TorchCommand::FromWords(std::move(words)).value(); }

bool Contains(const Words& words, const std::string& w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

train::TrainOptions ScriptOptions() {
  train::TrainOptions o;
  o.batch = 8;
  o.steps = 20;
  o.warmup_steps = 3;
  return o;
}

TEST(TorchCommand, NeedsAnInterpreterAndAScript) {
  EXPECT_FALSE(TorchCommand::FromWords({"python3"}).ok());
  EXPECT_FALSE(TorchCommand::FromWords({"python3", "-u", "train.py"}).ok());
  const TorchCommand c = Command({"python3", "train.py", "--batch", "{batch}"});
  EXPECT_EQ(c.interpreter, "python3");
  EXPECT_EQ(c.script, "train.py");
  EXPECT_TRUE(c.Has("{batch}"));
  EXPECT_FALSE(c.Has("{workers}"));
  EXPECT_EQ(c.Words(), (Words{"python3", "train.py", "--batch", "{batch}"}));
}

TEST(TorchCommand, AMisspeltPlaceholderIsRefusedAndDoubledBracesReachTheScript) {
  Result<TorchCommand> typo = TorchCommand::FromWords({"python3", "t.py", "--bs", "{batch_size}"});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("option --torch: '{batch_size}'"), std::string::npos);
  EXPECT_NE(typo.status().message().find("did you mean {batch}?"), std::string::npos);
  // {n}: the run's replica count, for a script that starts its own processes.
  const TorchCommand spawning = Command({"python3", "t.py", "--world-size", "{n}"});
  EXPECT_EQ(MapOntoTorch(spawning, ScriptOptions(), RunChange{}, 4).args,
            (Words{"--world-size", "4"}));
  EXPECT_FALSE(TorchCommand::FromWords({"python3", "t.py", "--name", "{N}"}).ok());
  const TorchCommand c =
      Command({"python3", "t.py", "--batch", "{batch}", "--ckpt", "ckpt-{{epoch}}-{{batch}}.pt"});
  EXPECT_TRUE(c.Has("{batch}"));
  EXPECT_FALSE(Command({"python3", "t.py", "{{batch}}"}).Has("{batch}"));
  const TorchMapping m = MapOntoTorch(c, ScriptOptions(), RunChange{}, 2);
  EXPECT_EQ(m.args, (Words{"--batch", "8", "--ckpt", "ckpt-{epoch}-{batch}.pt"}));
}

TEST(MapOntoTorch, TheStallTimeoutReachesTheHelperWhenNotTheDefault) {
  const TorchCommand c = Command({"python3", "t.py"});
  train::TrainOptions o = ScriptOptions();
  auto stall = [&] {
    const Words env = MapOntoTorch(c, o, RunChange{}, 2).env;
    return std::count_if(env.begin(), env.end(), [](const std::string& e) {
      return e.rfind("STEPSCOPE_STALL_TIMEOUT=", 0) == 0;
    });
  };
  EXPECT_EQ(stall(), 0);  // the helper's default is train's (a run's identity unchanged)
  o.stall_timeout_s = 30;
  EXPECT_TRUE(Contains(MapOntoTorch(c, o, RunChange{}, 2).env, "STEPSCOPE_STALL_TIMEOUT=30"));
}

TEST(TorchCommand, DefaultLauncherIsTorchRunByTheCommandsInterpreter) {
  EXPECT_EQ(DefaultTorchLauncher(Command({"/usr/bin/python3", "t.py"})),
            "/usr/bin/python3 -m stepscope_torch.run --nproc_per_node {n}");
}

TEST(MapOntoTorch, BaselineFillsPlaceholdersFromTheWorkload) {
  const TorchMapping m =
      MapOntoTorch(Command({"python3", "t.py", "--batch={batch}", "--w", "{workers}"}),
                   ScriptOptions(), RunChange{}, 2);
  EXPECT_EQ(m.args, (Words{"--batch=8", "--w", "1"}));
  EXPECT_TRUE(m.flags.empty());
  EXPECT_TRUE(m.not_applicable.empty());
  EXPECT_TRUE(Contains(m.env, "STEPSCOPE_STEPS=20"));
  EXPECT_TRUE(Contains(m.env, "STEPSCOPE_WARMUP_STEPS=3"));
  EXPECT_FALSE(std::any_of(m.env.begin(), m.env.end(), [](const std::string& e) {
    return e.rfind("STEPSCOPE_VARIANT", 0) == 0;
  }));
}

TEST(MapOntoTorch, AblationsGoToTheHelper) {
  const TorchCommand c = Command({"python3", "t.py"});
  RunChange no_reduce;
  no_reduce.no_reduce = true;
  EXPECT_TRUE(
      Contains(MapOntoTorch(c, ScriptOptions(), no_reduce, 2).env, "STEPSCOPE_VARIANT=no_reduce"));
  RunChange synthetic;
  synthetic.synthetic_input = true;
  EXPECT_TRUE(Contains(MapOntoTorch(c, ScriptOptions(), synthetic, 2).env,
                       "STEPSCOPE_VARIANT=synthetic_input"));
}

TEST(MapOntoTorch, LeversUsePlaceholdersElseVariablesElseAreNotApplicable) {
  RunChange change;
  change.levers.micro_batch = 16;
  change.levers.bucket_mib = 1.5;
  change.levers.loader_workers = 2;
  change.levers.wire = comm::WireDtype::kBf16;
  const TorchMapping with =
      MapOntoTorch(Command({"python3", "t.py", "--batch", "{batch}", "--bucket", "{bucket_mb}"}),
                   ScriptOptions(), change, 2);
  EXPECT_EQ(with.args, (Words{"--batch", "16", "--bucket", "1.5"}));
  EXPECT_TRUE(Contains(with.env, "STEPSCOPE_LOADER_WORKERS=2"));
  EXPECT_TRUE(Contains(with.env, "STEPSCOPE_REDUCE_DTYPE=bf16"));
  EXPECT_FALSE(Contains(with.env, "STEPSCOPE_BUCKET_MB=1.5"));
  EXPECT_TRUE(with.not_applicable.empty());

  const TorchMapping without =
      MapOntoTorch(Command({"python3", "t.py"}), ScriptOptions(), change, 2);
  EXPECT_TRUE(Contains(without.env, "STEPSCOPE_BUCKET_MB=1.5"));
  ASSERT_EQ(without.not_applicable.size(), 1u);
  EXPECT_NE(without.not_applicable[0].find("{batch}"), std::string::npos);
}

TEST(MapOntoTorch, AccumulationGoesToItsPlaceholderElseToTheHelper) {
  RunChange change;
  change.levers.accumulation = 4;
  const TorchMapping with =
      MapOntoTorch(Command({"python3", "t.py", "--accum", "{accum}"}), ScriptOptions(), change, 2);
  EXPECT_EQ(with.args, (Words{"--accum", "4"}));
  EXPECT_FALSE(Contains(with.env, "STEPSCOPE_ACCUM=4"));
  const TorchMapping without =
      MapOntoTorch(Command({"python3", "t.py"}), ScriptOptions(), change, 2);
  EXPECT_TRUE(Contains(without.env, "STEPSCOPE_ACCUM=4"));
  EXPECT_TRUE(Contains(without.flags, "STEPSCOPE_ACCUM=4"));
  EXPECT_TRUE(without.not_applicable.empty());

  // The baseline's own accumulation (diagnose --accum 2) reaches the script the same way; the
  // default, 1, sets nothing.
  train::TrainOptions accumulating = ScriptOptions();
  accumulating.accum = 2;
  EXPECT_TRUE(Contains(MapOntoTorch(Command({"python3", "t.py"}), accumulating, RunChange{}, 2).env,
                       "STEPSCOPE_ACCUM=2"));
  const TorchMapping placed = MapOntoTorch(Command({"python3", "t.py", "--accum", "{accum}"}),
                                           accumulating, RunChange{}, 2);
  EXPECT_EQ(placed.args, (Words{"--accum", "2"}));
  EXPECT_FALSE(Contains(placed.env, "STEPSCOPE_ACCUM=2"));
  for (const std::string& e :
       MapOntoTorch(Command({"python3", "t.py"}), ScriptOptions(), RunChange{}, 2).env) {
    EXPECT_NE(e.rfind("STEPSCOPE_ACCUM", 0), 0u) << e;
  }
  // Without the helper there is no one to accumulate.
  TorchCommand traces = Command({"python3", "t.py"});
  traces.helper = false;
  EXPECT_EQ(MapOntoTorch(traces, ScriptOptions(), change, 2).not_applicable.size(), 1u);
}

TEST(PlanMainRuns, TorchRunsCarryTheScriptsArgumentsAndTheHelpersEnvironment) {
  PlanRequest r;
  r.options = ScriptOptions();
  r.torch = Command({"python3", "t.py", "--batch", "{batch}"});
  r.replicas = {1, 2};
  r.ablate_at = {2};
  const RunPlan plan = PlanMainRuns(r);
  ASSERT_EQ(plan.runs.size(), 5u);
  EXPECT_EQ(plan.runs[0].args, (Words{"--batch", "8"}));
  const PlannedRun& doubled = plan.runs.back();
  EXPECT_EQ(doubled.name, "double_batch-n2");
  EXPECT_EQ(doubled.args, (Words{"--batch", "16"}));
  EXPECT_TRUE(Contains(plan.runs[2].env, "STEPSCOPE_VARIANT=no_reduce"));
}

TEST(PlanWireCheck, AScriptsRunsReduceInTheCheckedPrecisionAndReseedTheThird) {
  PlanRequest r;
  r.options = ScriptOptions();
  r.torch = Command({"python3", "t.py", "--batch", "{batch}"});
  const RunPlan plan = PlanWireCheck(r, comm::WireDtype::kBf16, 200);
  ASSERT_EQ(plan.runs.size(), 3u);
  for (const PlannedRun& run : plan.runs) {
    EXPECT_EQ(run.args, (Words{"--batch", "8"}));
    EXPECT_TRUE(Contains(run.env, "STEPSCOPE_STEPS=200")) << run.name;
  }
  EXPECT_FALSE(Contains(plan.runs[0].env, "STEPSCOPE_REDUCE_DTYPE=bf16"));
  EXPECT_TRUE(Contains(plan.runs[1].env, "STEPSCOPE_REDUCE_DTYPE=bf16"));
  EXPECT_FALSE(Contains(plan.runs[2].env, "STEPSCOPE_REDUCE_DTYPE=bf16"));
  // The reduced run measures its gradient's error against fp32; the others do not.
  EXPECT_FALSE(Contains(plan.runs[0].env, "STEPSCOPE_MEASURE_WIRE_ERROR=1"));
  EXPECT_TRUE(Contains(plan.runs[1].env, "STEPSCOPE_MEASURE_WIRE_ERROR=1"));
  EXPECT_FALSE(Contains(plan.runs[2].env, "STEPSCOPE_MEASURE_WIRE_ERROR=1"));
  for (int i : {0, 1}) {
    EXPECT_FALSE(
        std::any_of(plan.runs[i].env.begin(), plan.runs[i].env.end(),
                    [](const std::string& e) { return e.rfind("STEPSCOPE_SEED", 0) == 0; }))
        << plan.runs[i].name;
  }
  EXPECT_TRUE(Contains(plan.runs[2].env, "STEPSCOPE_SEED=2"));
  // A script that takes its seed: every run fills {seed}, the third with another.
  r.torch = Command({"python3", "t.py", "--seed", "{seed}"});
  const RunPlan seeded = PlanWireCheck(r, comm::WireDtype::kBf16, 200);
  EXPECT_EQ(seeded.runs[0].args, (Words{"--seed", "1"}));
  EXPECT_EQ(seeded.runs[1].args, (Words{"--seed", "1"}));
  EXPECT_EQ(seeded.runs[2].args, (Words{"--seed", "2"}));
  EXPECT_FALSE(Contains(seeded.runs[2].env, "STEPSCOPE_SEED=2"));
}

TEST(PlanNoiseScale, AScriptsRunSamplesTheNormsEveryStep) {
  PlanRequest r;
  r.options = ScriptOptions();
  r.torch = Command({"python3", "t.py", "--batch", "{batch}"});
  const RunPlan plan = PlanNoiseScale(r, 1000);
  ASSERT_EQ(plan.runs.size(), 1u);
  const PlannedRun& run = plan.runs[0];
  EXPECT_EQ(run.name, "noise_scale-n2");
  EXPECT_EQ(run.args, (Words{"--batch", "8"}));
  EXPECT_TRUE(Contains(run.env, "STEPSCOPE_STEPS=1000"));
  EXPECT_TRUE(Contains(run.env, "STEPSCOPE_GRAD_NORM_EVERY=1"));
  EXPECT_FALSE(Contains(run.env, "STEPSCOPE_GRAD_NORM_EVERY=4"));
  // The sweep's own runs sample as the workload says.
  r.replicas = {1, 2};
  EXPECT_TRUE(Contains(PlanMainRuns(r).runs.at(0).env, "STEPSCOPE_GRAD_NORM_EVERY=4"));
}

TEST(PlanMainRuns, WithoutTheHelperOnlyTheDoubleBatchAblationRuns) {
  PlanRequest r;
  r.options = ScriptOptions();
  r.torch = Command({"python3", "t.py", "--batch", "{batch}"});
  r.torch->helper = false;
  r.replicas = {1, 2};
  r.ablate_at = {2};
  const RunPlan plan = PlanMainRuns(r);
  ASSERT_EQ(plan.runs.size(), 3u);
  EXPECT_EQ(plan.runs[2].name, "double_batch-n2");
  EXPECT_EQ(plan.notes.size(), 1u);
  RunChange change;
  change.levers.loader_workers = 2;
  change.levers.wire = comm::WireDtype::kBf16;
  const TorchMapping m = MapOntoTorch(*r.torch, ScriptOptions(), change, 2);
  EXPECT_EQ(m.not_applicable.size(), 2u);
}

}  // namespace
}  // namespace stepscope::plan
