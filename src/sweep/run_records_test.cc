#include "sweep/run_records.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sweep/sweep_store.h"

namespace stepscope::sweep {
namespace {

std::string RunDir(const std::string& name, const std::string& run_json) {
  const std::string dir = (std::filesystem::temp_directory_path() / name).string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/run.json") << run_json;
  return dir;
}

TEST(RunPacing, ReadsTheEmulationCounts) {
  const std::string dir = RunDir("stepscope_run_pacing_emulated",
                                 R"({"buckets_per_step": 3, "steps": 40,
    "emulation": {"emulated": true, "device_speed": 0.5, "link_gbps": 10,
                  "paced_segments": 200, "unhonoured_segments": 7, "unhonoured_links": 2}})");
  Result<std::optional<RunPacing>> p = ReadRunPacing(dir);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->paced_segments, 200);
  EXPECT_EQ((*p)->unhonoured_segments, 7);
  EXPECT_EQ((*p)->unhonoured_links, 2);
  EXPECT_EQ((*p)->link_reductions, 120);
  // Counts over the measured steps only: the reductions are those steps' buckets.
  const std::string counted = RunDir("stepscope_run_pacing_counted",
                                     R"({"buckets_per_step": 3, "steps": 40,
    "emulation": {"emulated": true, "device_speed": 0.5, "link_gbps": 10, "counted_steps": 30,
                  "paced_segments": 150, "unhonoured_segments": 0, "unhonoured_links": 2}})");
  p = ReadRunPacing(counted);
  ASSERT_TRUE(p.ok() && p->has_value());
  EXPECT_EQ((*p)->link_reductions, 90);
}

TEST(ScriptCollectives, CallsPerSteadyStepByNameAndNothingFromAFileWithout) {
  const std::string dir = RunDir(
      "stepscope_run_records_script_collectives",
      R"({"steady_steps": 20, "script_collectives": {"dist.barrier": 40, "dist.all_reduce": 5}})");
  const std::vector<std::pair<std::string, double>> calls = ReadScriptCollectives(dir);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], (std::pair<std::string, double>{"dist.all_reduce", 0.25}));
  EXPECT_EQ(calls[1], (std::pair<std::string, double>{"dist.barrier", 2.0}));
  EXPECT_TRUE(ReadScriptCollectives(
                  RunDir("stepscope_run_records_without_script", R"({"steady_steps": 20})"))
                  .empty());
  EXPECT_TRUE(
      ReadScriptCollectives(RunDir("stepscope_run_records_no_steady_steps",
                                   R"({"steady_steps": 0, "script_collectives": {"a": 1}})"))
          .empty());
  EXPECT_TRUE(ReadScriptCollectives(dir + "/absent").empty());
  const std::vector<std::pair<std::string, double>> plain = ReadScriptCollectives(
      RunDir("stepscope_run_records_escape",
             R"({"steady_steps": 2, "script_collectives": {"dist.barrier\u001b[2J": 2, "x": 4}})"));
  ASSERT_EQ(plain.size(), 1u);  // a name with a control character is left out
  EXPECT_EQ(plain[0].first, "x");
}

TEST(RunPacing, NotEmulatedIsNulloptAndMissingIsAnError) {
  const std::string dir =
      RunDir("stepscope_run_pacing_plain", R"({"emulation": {"emulated": false}})");
  Result<std::optional<RunPacing>> p = ReadRunPacing(dir);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->has_value());
  EXPECT_FALSE(ReadRunPacing(dir + "/absent").ok());
}

// Damaged files found by fuzzing: a flag of the wrong kind, a count beyond int64 and a replica
// count beyond int are read as absent or refused with the field named, never thrown or
// converted out of range.
TEST(RunPacing, DamagedFieldsAreAbsentOrNamed) {
  auto p = RunPacingFromText(R"({"emulation": {"emulated": "yes", "paced_segments": 1}})", "r");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->has_value());
  p = RunPacingFromText(
      R"({"steps": 1e300, "buckets_per_step": 4,
          "emulation": {"emulated": true, "paced_segments": 1e300, "link_gbps": 1}})",
      "r");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->paced_segments, 0);
  EXPECT_EQ((*p)->link_reductions, 0);
  auto s = RunSummaryFromText(R"({"replicas": 1e300})", "x/run.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("x/run.json: field 'replicas'"), std::string::npos)
      << s.status().message();
}

// The smallest run.json RunSummaryFromText reads, with `extra` fields added at the top level.
std::string MinimalRunJson(const std::string& extra) {
  return R"({"replicas": 4, "allreduce": "shm", "samples_per_s": 100,
    "config": {"batch": 8, "accum": 1, "loader_workers": 1, "synthetic_input": false,
               "optimizer": {"kind": "sgd"},
               "reducer": {"reduce": true, "overlap": true, "bucket_mb": 25, "dtype": "fp32"}},
    "model": {"gradient_bytes": 400, "parameters": 100, "activation_bytes_per_sample": 64})" +
         extra + "}";
}

TEST(RunSummary, ReadsTheCpuPerStepAndRefusesANegativeOne) {
  auto s = RunSummaryFromText(MinimalRunJson(""), "r/run.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->cpu_per_step.has_value());  // written before it was recorded
  s = RunSummaryFromText(MinimalRunJson(R"(, "cpu": null)"), "r/run.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->cpu_per_step.has_value());  // a rank's clock could not be read
  s = RunSummaryFromText(
      MinimalRunJson(
          R"(, "cpu": {"per_step_s": 0.0065, "outside_reductions_per_step_s": 0.005, "busiest_host_share": 0.97})"),
      "r/run.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_DOUBLE_EQ(*s->cpu_per_step, 0.0065);
  EXPECT_DOUBLE_EQ(*s->busiest_host_share, 0.97);
  EXPECT_DOUBLE_EQ(*s->cpu_outside_reductions_per_step, 0.005);
  s = RunSummaryFromText(
      MinimalRunJson(R"(, "cpu": {"per_step_s": 0.0065, "outside_reductions_per_step_s": null})"),
      "r/run.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->cpu_outside_reductions_per_step.has_value());  // a rank that could not tell
  s = RunSummaryFromText(MinimalRunJson(R"(, "cpu": {"per_step_s": -1})"), "r/run.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("r/run.json: field 'cpu.per_step_s'"), std::string::npos)
      << s.status().message();
}

TEST(RunSummary, ReadsALoaderInTheTrainingProcessAndNamesADamagedCount) {
  // The PyTorch helper's run.json: loader_workers at least 1, the DataLoader's own count beside.
  auto with_workers = [](const std::string& raw) {
    std::string text = MinimalRunJson("");
    const std::string workers = R"("loader_workers": 1,)";
    text.replace(text.find(workers), workers.size(),
                 workers + R"( "dataloader_num_workers": )" + raw + ",");
    return RunSummaryFromText(text, "r/run.json");
  };
  auto s = RunSummaryFromText(MinimalRunJson(""), "r/run.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->loader_in_process);  // stepscope's trainer: workers beside the ranks
  s = with_workers("0");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->loader_in_process);
  EXPECT_EQ(s->loader_workers, 1);
  s = with_workers("2");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->loader_in_process);
  for (const char* bad : {"-1", "\"none\""}) {
    s = with_workers(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find("r/run.json: field 'config.dataloader_num_workers'"),
              std::string::npos)
        << s.status().message();
  }
}

TEST(RunSummary, ReadsTheScriptsOwnCommunicationHookAndNamesADamagedOne) {
  auto with_hook = [](const std::string& hook) {
    std::string text = MinimalRunJson("");
    const std::string dtype = R"("dtype": "fp32")";
    text.replace(text.find(dtype), dtype.size(), R"("dtype": "fp16", "comm_hook": )" + hook);
    return RunSummaryFromText(text, "r/run.json");
  };
  auto s = RunSummaryFromText(MinimalRunJson(""), "r/run.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->comm_hook, "");  // stepscope's trainer, or the helper before it knew of hooks
  s = with_hook("null");        // the helper's own timed reduction
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->comm_hook, "");
  s = with_hook(R"("fp16_compress_hook")");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->comm_hook, "fp16_compress_hook");
  EXPECT_EQ(s->reduce_dtype, "fp16");
  EXPECT_FALSE(s->comm_hook_bytes_are_bucket);
  s = with_hook(R"("powerSGD_hook", "comm_hook_bytes": "bucket")");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->comm_hook_bytes_are_bucket);
  s = with_hook(R"("powerSGD_hook", "comm_hook_bytes": "all")");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("r/run.json: field 'config.reducer.comm_hook_bytes'"),
            std::string::npos)
      << s.status().message();
  s = with_hook("3");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("r/run.json: field 'config.reducer.comm_hook'"),
            std::string::npos)
      << s.status().message();
}

TEST(RunSummary, ReadsTheLeastRanksCpuInReductionsAndNamesADamagedList) {
  auto with_ranks = [](const std::string& ranks) {
    return RunSummaryFromText(
        MinimalRunJson(R"(, "cpu": {"per_step_s": 0.0065, "per_rank_in_reductions_per_step_s": )" +
                       ranks + "}"),
        "r/run.json");
  };
  auto s = with_ranks("[0.003, 0.0012, 0.002, 0.004]");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_DOUBLE_EQ(*s->cpu_in_reductions_least_rank, 0.0012);
  ASSERT_EQ(s->replicas, 4);
  s = with_ranks("null");  // a rank that could not tell
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->cpu_in_reductions_least_rank.has_value());
  for (const std::string bad :
       {"[]", "[0.001, -0.002]", "[0.001, \"x\"]", "0.001", "[0.001, 0.002, 0.003]"}) {
    s = with_ranks(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(
        s.status().message().find("r/run.json: field 'cpu.per_rank_in_reductions_per_step_s'"),
        std::string::npos)
        << s.status().message();
  }
}

TEST(RunSummary, ReadsTheLatencyProbeAndNamesADamagedOne) {
  auto with_probe = [](const std::string& probe) {
    return RunSummaryFromText(MinimalRunJson(R"(, "latency_probe": )" + probe), "r/run.json");
  };
  auto s = with_probe(R"({"bytes": 1024, "seconds": [0.0005, 0.0004, 0.0006], "how": "h"})");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->latency_probe_bytes, 1024);
  EXPECT_EQ(s->latency_probe_seconds, (std::vector<double>{0.0005, 0.0004, 0.0006}));
  s = with_probe("null");  // one replica, no reduction, --latency-probes 0
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->latency_probe_seconds.empty());
  EXPECT_TRUE(RunSummaryFromText(MinimalRunJson(""), "r/run.json")->latency_probe_seconds.empty());
  for (const auto& [bad, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"bytes": 1024, "seconds": []})", "latency_probe.seconds"},
           {R"({"bytes": 1024, "seconds": [0.001, -0.001]})", "latency_probe.seconds"},
           {R"({"bytes": 1024, "seconds": 0.001})", "latency_probe.seconds"},
           {R"({"bytes": 1024})", "latency_probe.seconds"},
           {R"({"bytes": 0, "seconds": [0.001]})", "latency_probe.bytes"},
           {R"({"seconds": [0.001]})", "latency_probe.bytes"}}) {
    s = with_probe(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find("r/run.json: field '" + field + "'"), std::string::npos)
        << s.status().message();
  }
}

TEST(RunSummary, ReadsTheReadySlicesAndNamesADamagedOne) {
  auto with_slices = [](const std::string& slices) {
    std::string text = MinimalRunJson("");
    text.replace(text.find(R"("activation_bytes_per_sample": 64})"), 34,
                 R"("activation_bytes_per_sample": 64, "ready_slices_bytes": )" + slices + "}");
    return RunSummaryFromText(text, "r/run.json");
  };
  auto s = RunSummaryFromText(MinimalRunJson(""), "r/run.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->ready_slice_bytes.empty());  // traces and older runs
  s = with_slices("[100, 300]");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->ready_slice_bytes, (std::vector<int64_t>{100, 300}));
  for (const char* bad : {"[100, 0]", "[\"a\"]", "7"}) {
    s = with_slices(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find("r/run.json: field 'model.ready_slices_bytes'"),
              std::string::npos)
        << s.status().message();
  }
  // When each slice was ready within backward: one share per slice, each from 0 to 1.
  s = with_slices("[100, 300], \"ready_slices_backward_share\": [0.25, 1]");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->ready_slice_backward_share, (std::vector<double>{0.25, 1}));
  s = with_slices("[100, 300], \"ready_slices_backward_share\": []");  // no steady step reduced
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->ready_slice_backward_share.empty());
  for (const char* bad : {"[0.25]", "[0.25, 1.5]", "[-0.1, 1]", "[\"a\", 1]", "0.5"}) {
    s = with_slices(std::string("[100, 300], \"ready_slices_backward_share\": ") + bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find("r/run.json: field 'model.ready_slices_backward_share'"),
              std::string::npos)
        << s.status().message();
  }
}

TEST(RunSummary, ReadsWhatBucketingWouldChangeAndNamesADamagedField) {
  auto s = RunSummaryFromText(MinimalRunJson(R"(, "lengths": null)"), "r/run.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->lengths.has_value());  // fixed-length batches
  s = RunSummaryFromText(
      MinimalRunJson(R"(, "lengths": {"balanced": false, "buckets": 16, "padded_share": 0.6,
                       "bucketed_work_ratio": 0.45, "bucketed_spread": [0.8, 1.0, 1.2]})"),
      "r/run.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s->lengths.has_value());
  EXPECT_FALSE(s->lengths->balanced);
  EXPECT_DOUBLE_EQ(s->lengths->bucketed_work_ratio, 0.45);
  EXPECT_EQ(s->lengths->bucketed_spread, (std::vector<double>{0.8, 1.0, 1.2}));
  const std::pair<const char*, const char*> bad[] = {
      {R"("bucketed_work_ratio": 0, "bucketed_spread": [1])", "lengths.bucketed_work_ratio"},
      {R"("bucketed_work_ratio": 1.5, "bucketed_spread": [1])", "lengths.bucketed_work_ratio"},
      {R"("bucketed_work_ratio": 0.5, "bucketed_spread": [1.2, 0.8])", "lengths.bucketed_spread"},
      {R"("bucketed_work_ratio": 0.5, "bucketed_spread": [])", "lengths.bucketed_spread"},
      {R"("bucketed_work_ratio": 0.5)", "lengths.bucketed_spread"},
  };
  for (const auto& [fields, name] : bad) {
    s = RunSummaryFromText(
        MinimalRunJson(std::string(R"(, "lengths": {"balanced": false, )") + fields + "}"),
        "r/run.json");
    ASSERT_FALSE(s.ok()) << fields;
    EXPECT_NE(s.status().message().find(std::string("r/run.json: field '") + name + "'"),
              std::string::npos)
        << s.status().message();
  }
}

TEST(SweepManifest, DamagedRunIsNamed) {
  auto runs = ParseSweepManifest(
      R"({"workload": ["w"], "runs": [{"name": "a", "args": [], "state": "finished",
          "replicas": 1e300, "seconds": 1}]})",
      "d/sweep.json", {"w"});
  ASSERT_FALSE(runs.ok());
  EXPECT_NE(runs.status().message().find("runs[0].replicas"), std::string::npos)
      << runs.status().message();
  EXPECT_NE(runs.status().message().find("--fresh"), std::string::npos);
  EXPECT_FALSE(ParseSweepManifest("[1,2]", "d/sweep.json", {"w"}).ok());
  EXPECT_FALSE(ParseSweepManifest(R"({"workload": ["w"], "runs": 3})", "d/sweep.json", {"w"}).ok());
}

}  // namespace
}  // namespace stepscope::sweep
