#include "trace/importer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "trace/byte_source.h"
#include "trace/test_util.h"

namespace stepscope::trace {
namespace {

// A Kineto-like GPU trace, times in microseconds, one step [0, 100):
//   compute kernels: [10,30) [20,40) (overlapping) and [50,60), memcpy [90,95)
//   nccl kernel:     [35,70)  -> comm busy 35, overlap with compute [35,40)+[50,60) = 15
//   DataLoader:      [0,8)
//   compute union = [10,40)+[50,60)+[90,95) = 45; any = [10,70)+[90,95) = 65; idle = 35
// Events deliberately unsorted; one zero and one negative duration event are dropped.
const char kGpu[] = R"J({"distributedInfo":{"rank":1,"world_size":2},"traceEvents":[
 {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)","pid":0,"tid":7,
  "ts":35,"dur":35,"args":{"stream":7,"Collective name":"allreduce","In msg nelems":1000,
  "dtype":"Float","Process Group Name":"0"}},
 {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":20,"dur":20},
 {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":20},
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","cat":"kernel","name":"relu","pid":0,"tid":8,"ts":50,"dur":10},
 {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":8,"ts":90,"dur":5},
 {"ph":"X","cat":"kernel","name":"zero","pid":0,"tid":8,"ts":96,"dur":0},
 {"ph":"X","cat":"kernel","name":"neg","pid":0,"tid":8,"ts":97,"dur":-3},
 {"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
  "pid":1,"tid":1,"ts":0,"dur":8},
 {"ph":"Q","name":"unknown phase"}
]})J";

void ExpectGpuNumbers(const ImportedTrace& t) {
  EXPECT_EQ(t.format, TraceFormat::kKinetoGpu);
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.world_size, 2);
  ASSERT_EQ(t.steps.size(), 1u);
  const ImportedStep& s = t.steps[0];
  EXPECT_EQ(s.step, 4);
  EXPECT_NEAR(s.step_time(), 100e-6, 1e-12);
  EXPECT_NEAR(s.compute, 45e-6, 1e-12);
  EXPECT_NEAR(s.comm_busy, 35e-6, 1e-12);
  EXPECT_NEAR(s.overlap, 15e-6, 1e-12);
  EXPECT_NEAR(s.exposed_comm, 20e-6, 1e-12);
  EXPECT_NEAR(s.idle, 35e-6, 1e-12);
  EXPECT_NEAR(s.input_wait, 8e-6, 1e-12);
  EXPECT_FALSE(s.host_bound);  // idle 35% < 50%
  ASSERT_EQ(s.collectives.size(), 1u);
  EXPECT_EQ(s.collectives[0].name, "allreduce");
  EXPECT_EQ(s.collectives[0].group, "0");
  EXPECT_EQ(s.collectives[0].bytes, 4000);
  EXPECT_FALSE(s.backward_start.has_value());  // no autograd events in this trace
  EXPECT_GE(t.warnings, 1u);                   // zero/negative durations
}

TEST(Importer, KinetoGpuHandBuilt) {
  auto t = ImportTraceBuffer(kGpu, "gpu.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ExpectGpuNumbers(*t);
  auto gz = ImportTraceBuffer(testing::Gzip(kGpu), "gpu.json.gz");
  ASSERT_TRUE(gz.ok());
  ExpectGpuNumbers(*gz);
  auto records = t->ToStepRecords();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].rank, 1);
  EXPECT_NEAR(records[0].compute, 45e-6, 1e-12);
  EXPECT_NEAR(records[0].exposed_comm, 20e-6, 1e-12);
  EXPECT_NEAR(records[0].collectives[0].ready, 35e-6, 1e-12);
}

// Legacy CPU trace: main thread tid 1 with two steps; gloo worker threads 2 and 3.
//   step 0 [0,100): ops [0,50) nested [10,20), [60,70); gloo [40,80) on tid 2 -> compute 60,
//     comm 40, overlap [40,50)+[60,70) = 20, exposed 20, idle [80,100) = 20
//   step 1 [100,200): op [100,150); gloo [150,160) tid 3 and [155,170) tid 2 -> comm [150,170)
//     = 20, overlap 0, idle 30
const char kLegacy[] = R"([
 {"name":"ProfilerStep#1","ph":"X","ts":100,"dur":100,"tid":1,"pid":"CPU functions"},
 {"name":"ProfilerStep#0","ph":"X","ts":0,"dur":100,"tid":1,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":0,"dur":50,"tid":1,"pid":"CPU functions"},
 {"name":"aten::add","ph":"X","ts":10,"dur":10,"tid":1,"pid":"CPU functions"},
 {"name":"aten::relu","ph":"X","ts":60,"dur":10,"tid":1,"pid":"CPU functions"},
 {"name":"gloo:all_reduce","ph":"X","ts":40,"dur":40,"tid":2,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":100,"dur":50,"tid":1,"pid":"CPU functions"},
 {"name":"gloo:all_reduce","ph":"X","ts":150,"dur":10,"tid":3,"pid":"CPU functions"},
 {"name":"gloo:all_reduce","ph":"X","ts":155,"dur":15,"tid":2,"pid":"CPU functions"},
 {"name":"aten::copy_","ph":"X","ts":156,"dur":2,"tid":2,"pid":"CPU functions"}
])";

TEST(Importer, LegacyCpuHandBuilt) {
  ImportOptions opt;
  opt.rank = 5;
  auto t = ImportTraceBuffer(kLegacy, "legacy.json", opt);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, TraceFormat::kLegacy);
  EXPECT_EQ(t->clock, ClockKind::kUnaligned);
  EXPECT_EQ(t->rank, 5);
  ASSERT_EQ(t->steps.size(), 2u);
  const ImportedStep& a = t->steps[0];
  EXPECT_EQ(a.step, 0);
  EXPECT_NEAR(a.compute, 60e-6, 1e-12);
  EXPECT_NEAR(a.comm_busy, 40e-6, 1e-12);
  EXPECT_NEAR(a.overlap, 20e-6, 1e-12);
  EXPECT_NEAR(a.exposed_comm, 20e-6, 1e-12);
  EXPECT_NEAR(a.idle, 20e-6, 1e-12);
  const ImportedStep& b = t->steps[1];
  EXPECT_NEAR(b.compute, 50e-6, 1e-12);  // aten::copy_ on the gloo thread is not compute
  EXPECT_NEAR(b.comm_busy, 20e-6, 1e-12);
  EXPECT_NEAR(b.overlap, 0, 1e-12);
  EXPECT_NEAR(b.idle, 30e-6, 1e-12);
  EXPECT_EQ(b.collectives.size(), 2u);
  EXPECT_FALSE(a.backward_start.has_value());
  EXPECT_FALSE(a.script_comm.has_value());  // no launches: the trace cannot tell whose they are
}

// The script's own collectives (collective_origin.h) leave the gradient's communication. Step 0
// [0,100): DDP's forward [0,20), backward [20,40) launching DDP's all-reduce at 30, which a gloo
// worker runs at [42,50), after backward's last function; the optimizer [52,56); then the
// script's barrier, launched at 60 and run [61,91) (the rank waits there for the others). Step 1
// [100,200): the same without the barrier. Without DDP's forward in the trace the job may be
// another kind (a model-parallel one's forward calls collectives): nothing is set apart.
TEST(Importer, TheScriptsOwnCollectivesAreNotTheGradients) {
  const std::string kTrace = R"([
 {"name":"ProfilerStep#0","ph":"X","ts":0,"dur":100,"tid":1,"pid":"CPU functions"},
 {"name":"DistributedDataParallel.forward","ph":"X","ts":0,"dur":20,"tid":1,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":0,"dur":20,"tid":1,"pid":"CPU functions"},
 {"name":"autograd::engine::evaluate_function: torch::autograd::AccumulateGrad","ph":"X",
  "ts":20,"dur":20,"tid":1,"pid":"CPU functions"},
 {"name":"c10d::allreduce_","ph":"X","ts":30,"dur":2,"tid":1,"pid":"CPU functions"},
 {"name":"gloo:all_reduce","ph":"X","ts":42,"dur":8,"tid":2,"pid":"CPU functions"},
 {"name":"aten::add_","ph":"X","ts":52,"dur":4,"tid":1,"pid":"CPU functions"},
 {"name":"c10d::barrier","ph":"X","ts":60,"dur":1,"tid":1,"pid":"CPU functions"},
 {"name":"gloo:barrier","ph":"X","ts":61,"dur":30,"tid":3,"pid":"CPU functions"},
 {"name":"ProfilerStep#1","ph":"X","ts":100,"dur":100,"tid":1,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":100,"dur":20,"tid":1,"pid":"CPU functions"},
 {"name":"autograd::engine::evaluate_function: torch::autograd::AccumulateGrad","ph":"X",
  "ts":120,"dur":20,"tid":1,"pid":"CPU functions"},
 {"name":"c10d::allreduce_","ph":"X","ts":130,"dur":2,"tid":1,"pid":"CPU functions"},
 {"name":"gloo:all_reduce","ph":"X","ts":131,"dur":8,"tid":3,"pid":"CPU functions"},
 {"name":"aten::add_","ph":"X","ts":152,"dur":4,"tid":1,"pid":"CPU functions"}
])";
  auto t = ImportTraceBuffer(kTrace, "script.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->steps.size(), 2u);
  const ImportedStep& a = t->steps[0];
  EXPECT_NEAR(a.compute, 44e-6, 1e-12);
  EXPECT_NEAR(a.comm_busy, 8e-6, 1e-12);
  EXPECT_NEAR(a.exposed_comm, 8e-6, 1e-12);
  EXPECT_NEAR(a.idle, 48e-6, 1e-12);
  ASSERT_TRUE(a.script_comm.has_value());
  EXPECT_NEAR(*a.script_comm, 30e-6, 1e-12);
  EXPECT_EQ(a.script_calls, (std::map<std::string, int>{{"barrier", 1}}));
  ASSERT_EQ(a.collectives.size(), 1u);
  EXPECT_EQ(a.collectives[0].name, "gloo:all_reduce");
  EXPECT_NEAR(a.optimizer, 4e-6, 1e-12);  // after the gradient's last reduction, not the barrier
  const ImportedStep& b = t->steps[1];
  EXPECT_NEAR(b.comm_busy, 8e-6, 1e-12);
  EXPECT_NEAR(b.exposed_comm, 0, 1e-12);  // hidden behind backward
  ASSERT_TRUE(b.script_comm.has_value());
  EXPECT_EQ(*b.script_comm, 0);
  EXPECT_TRUE(b.script_calls.empty());
  const auto records = t->ToStepRecords();
  ASSERT_TRUE(records[0].script_comm.has_value());
  EXPECT_NEAR(*records[0].script_comm, 30e-6, 1e-12);

  std::string other = kTrace;
  other.erase(other.find(" {\"name\":\"DistributedDataParallel.forward\""),
              other.find(" {\"name\":\"aten::mm\"") - other.find(" {\"name\":\"Distrib"));
  auto u = ImportTraceBuffer(other, "other.json");
  ASSERT_TRUE(u.ok()) << u.status().message();
  ASSERT_EQ(u->steps.size(), 2u);
  EXPECT_FALSE(u->steps[0].script_comm.has_value());
  EXPECT_NEAR(u->steps[0].comm_busy, 38e-6, 1e-12);
  EXPECT_EQ(u->steps[0].collectives.size(), 2u);
}

// The same on a device: NCCL kernels run the launches in order. Step [0,100): DDP's forward and
// backward on the host [0,40), DDP's all-reduce launched at 30 and run [35,50) on the device
// beside compute [10,45); the loss all-reduced by the script, launched at 60 and run [60,80)
// (the device waits there for the other rank); a barrier launched at 85, which NCCL runs as an
// all-reduce [86,90).
TEST(Importer, TheScriptsOwnKernelsAreNotTheGradients) {
  const char kTrace[] = R"J({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#0","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","cat":"user_annotation","name":"DistributedDataParallel.forward","pid":1,"tid":1,
  "ts":0,"dur":20},
 {"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: AddmmBackward0","pid":1,
  "tid":1,"ts":20,"dur":20},
 {"ph":"X","cat":"cpu_op","name":"c10d::allreduce_","pid":1,"tid":1,"ts":30,"dur":1},
 {"ph":"X","cat":"cpu_op","name":"c10d::allreduce_","pid":1,"tid":1,"ts":60,"dur":1},
 {"ph":"X","cat":"cpu_op","name":"c10d::barrier","pid":1,"tid":1,"ts":85,"dur":1},
 {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":35},
 {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float(x)","pid":0,"tid":8,
  "ts":35,"dur":15},
 {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float(x)","pid":0,"tid":8,
  "ts":60,"dur":20},
 {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float(x)","pid":0,"tid":8,
  "ts":86,"dur":4}
]})J";
  auto t = ImportTraceBuffer(kTrace, "gpu_script.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->steps.size(), 1u);
  const ImportedStep& s = t->steps[0];
  EXPECT_NEAR(s.comm_busy, 15e-6, 1e-12);
  EXPECT_NEAR(s.exposed_comm, 5e-6, 1e-12);
  ASSERT_TRUE(s.script_comm.has_value());
  EXPECT_NEAR(*s.script_comm, 24e-6, 1e-12);
  EXPECT_EQ(s.script_calls, (std::map<std::string, int>{{"all_reduce", 1}, {"barrier", 1}}));
  EXPECT_EQ(s.collectives.size(), 1u);
}

// The backward start is the first autograd function (or "## backward ##" annotation) of the
// step: step 0 [0,100) has autograd functions at 45 (nested at 47) and 30; step 1 [100,200) a
// "## backward ##" annotation at 120 (Kineto) and one at 140; step 2 [200,300) none.
TEST(Importer, BackwardStartFromAutogradEvents) {
  const char kTrace[] = R"([
 {"name":"ProfilerStep#0","ph":"X","ts":0,"dur":100,"tid":1,"pid":"CPU functions"},
 {"name":"ProfilerStep#1","ph":"X","ts":100,"dur":100,"tid":1,"pid":"CPU functions"},
 {"name":"ProfilerStep#2","ph":"X","ts":200,"dur":100,"tid":1,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":5,"dur":20,"tid":1,"pid":"CPU functions"},
 {"name":"autograd::engine::evaluate_function: AddmmBackward0","ph":"X","ts":45,"dur":10,
  "tid":1,"pid":"CPU functions"},
 {"name":"autograd::engine::evaluate_function: torch::autograd::AccumulateGrad","ph":"X",
  "ts":47,"dur":2,"tid":1,"pid":"CPU functions"},
 {"name":"autograd::engine::evaluate_function: NllLossBackward0","ph":"X","ts":30,"dur":10,
  "tid":1,"pid":"CPU functions"},
 {"name":"## backward ##","ph":"X","ts":140,"dur":10,"tid":1,"pid":"CPU functions"},
 {"name":"## backward ##","ph":"X","ts":120,"dur":30,"tid":1,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":210,"dur":20,"tid":1,"pid":"CPU functions"}
])";
  auto t = ImportTraceBuffer(kTrace, "backward.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->steps.size(), 3u);
  ASSERT_TRUE(t->steps[0].backward_start.has_value());
  EXPECT_NEAR(*t->steps[0].backward_start, 30e-6, 1e-12);
  ASSERT_TRUE(t->steps[1].backward_start.has_value());
  EXPECT_NEAR(*t->steps[1].backward_start, 120e-6, 1e-12);
  EXPECT_FALSE(t->steps[2].backward_start.has_value());
  auto records = t->ToStepRecords();
  ASSERT_TRUE(records[0].backward_start.has_value());
  EXPECT_NEAR(*records[0].backward_start, 30e-6, 1e-12);
  EXPECT_FALSE(records[2].backward_start.has_value());
}

// The step's compute split for the step-time model: forward before the first autograd function
// (aten::mm [5,25)), the optimizer after the last reduction ended (aten::add_ [85,95), after the
// all-reduce [55,80)), backward the rest; records carry them. Without a backward start: none.
TEST(Importer, ComputeSplitIntoForwardBackwardAndOptimizer) {
  const char kTrace[] = R"([
 {"name":"ProfilerStep#0","ph":"X","ts":0,"dur":100,"tid":1,"pid":"CPU functions"},
 {"name":"ProfilerStep#1","ph":"X","ts":100,"dur":100,"tid":1,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":5,"dur":20,"tid":1,"pid":"CPU functions"},
 {"name":"autograd::engine::evaluate_function: AddmmBackward0","ph":"X","ts":30,"dur":40,
  "tid":1,"pid":"CPU functions"},
 {"name":"gloo:all_reduce","ph":"X","ts":55,"dur":25,"tid":2,"pid":"CPU functions"},
 {"name":"aten::add_","ph":"X","ts":85,"dur":10,"tid":1,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":110,"dur":30,"tid":1,"pid":"CPU functions"}
])";
  auto t = ImportTraceBuffer(kTrace, "phases.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->steps.size(), 2u);
  const ImportedStep& a = t->steps[0];
  EXPECT_NEAR(a.forward, 20e-6, 1e-12);
  EXPECT_NEAR(a.optimizer, 10e-6, 1e-12);
  EXPECT_NEAR(a.forward + a.backward + a.optimizer, a.compute, 1e-12);
  EXPECT_GT(a.backward, 0);
  EXPECT_EQ(t->steps[1].forward + t->steps[1].backward + t->steps[1].optimizer, 0);
  const auto records = t->ToStepRecords();
  EXPECT_NEAR(records[0].forward, 20e-6, 1e-12);
  EXPECT_NEAR(records[0].optimizer, 10e-6, 1e-12);
  EXPECT_NEAR(records[0].backward, a.backward, 1e-12);
}

// No "ProfilerStep#N": steps end where "Optimizer.step#" annotations end, the first starting
// with the trace (ts 0). Steps [0,90) [90,190) [190,290); the ops after 290 are an incomplete
// iteration, left out. Step 1: aten::mm [100,150) + optimizer [180,190) = 60 us of compute.
// An "Optimizer.step#" nested in another ([182,187) in [180,190)) ends no step.
const char kOptimizerSteps[] = R"([
 {"name":"aten::mm","ph":"X","ts":0,"dur":50,"tid":1,"pid":"CPU functions"},
 {"name":"Optimizer.step#SGD.step","ph":"X","ts":80,"dur":10,"tid":1,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":100,"dur":50,"tid":1,"pid":"CPU functions"},
 {"name":"Optimizer.step#SGD.step","ph":"X","ts":180,"dur":10,"tid":1,"pid":"CPU functions"},
 {"name":"Optimizer.step#SGD.step","ph":"X","ts":182,"dur":5,"tid":1,"pid":"CPU functions"},
 {"name":"gloo:all_reduce","ph":"X","ts":140,"dur":30,"tid":2,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":200,"dur":50,"tid":1,"pid":"CPU functions"},
 {"name":"Optimizer.step#SGD.step","ph":"X","ts":280,"dur":10,"tid":1,"pid":"CPU functions"},
 {"name":"aten::mm","ph":"X","ts":300,"dur":20,"tid":1,"pid":"CPU functions"}
])";

TEST(Importer, StepsInferredFromOptimizerSteps) {
  auto t = ImportTraceBuffer(kOptimizerSteps, "opt.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->steps_from, StepSource::kOptimizerStep);
  EXPECT_STREQ(StepSourceName(t->steps_from), "optimizer-step");
  ASSERT_EQ(t->steps.size(), 3u);
  EXPECT_EQ(t->steps[0].step, 0);
  EXPECT_EQ(t->steps[2].step, 2);
  EXPECT_NEAR(t->steps[0].start, 0, 1e-12);
  EXPECT_NEAR(t->steps[0].end, 90e-6, 1e-12);
  EXPECT_NEAR(t->steps[1].start, 90e-6, 1e-12);
  EXPECT_NEAR(t->steps[1].end, 190e-6, 1e-12);
  EXPECT_NEAR(t->steps[2].end, 290e-6, 1e-12);
  EXPECT_NEAR(t->steps[1].compute, 60e-6, 1e-12);
  EXPECT_NEAR(t->steps[1].comm_busy, 30e-6, 1e-12);
  EXPECT_NEAR(t->steps[1].overlap, 10e-6, 1e-12);  // gloo [140,170) under mm until 150
  EXPECT_EQ(t->steps[1].collectives.size(), 1u);
  bool said = false;
  for (const std::string& w : t->warning_messages) {
    said = said || (w.find("opt.json") != std::string::npos &&
                    w.find("inferred from \"Optimizer.step#") != std::string::npos);
  }
  EXPECT_TRUE(said);
}

// No step or optimizer annotations, but one DDP forward per iteration: steps from each
// forward's start to the next one's, the last to the trace's end (320). A forward nested in
// another ([15,20) inside [10,40)) starts no step.
const char kForwardSteps[] = R"({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"DistributedDataParallel.forward","pid":1,"tid":1,"ts":10,"dur":30},
 {"ph":"X","cat":"user_annotation","name":"DistributedDataParallel.forward","pid":1,"tid":1,"ts":15,"dur":5},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":50,"dur":40},
 {"ph":"X","cat":"user_annotation","name":"DistributedDataParallel.forward","pid":1,"tid":1,"ts":110,"dur":30},
 {"ph":"X","cat":"user_annotation","name":"DistributedDataParallel.forward","pid":1,"tid":1,"ts":210,"dur":30},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":250,"dur":70}
]})";

TEST(Importer, StepsInferredFromForwardPasses) {
  auto t = ImportTraceBuffer(kForwardSteps, "fwd_rank2.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->steps_from, StepSource::kForward);
  ASSERT_EQ(t->steps.size(), 3u);
  EXPECT_NEAR(t->steps[0].start, 10e-6, 1e-12);
  EXPECT_NEAR(t->steps[0].end, 110e-6, 1e-12);
  EXPECT_NEAR(t->steps[0].compute, 70e-6, 1e-12);  // [10,40) + [50,90)
  EXPECT_NEAR(t->steps[2].start, 210e-6, 1e-12);
  EXPECT_NEAR(t->steps[2].end, 320e-6, 1e-12);
  EXPECT_NEAR(t->steps[2].idle, 10e-6, 1e-12);  // [240,250)
}

// Nothing repeats: the whole trace [1, 9) is one step, with a warning that says so.
TEST(Importer, WholeTraceIsOneStepWithoutAnyMarker) {
  auto t = ImportTraceBuffer(R"([{"name":"aten::mm","ph":"X","ts":1,"dur":2,"tid":1},)"
                             R"({"name":"aten::add","ph":"X","ts":5,"dur":4,"tid":1}])",
                             "plain.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->steps_from, StepSource::kWholeTrace);
  ASSERT_EQ(t->steps.size(), 1u);
  EXPECT_NEAR(t->steps[0].step_time(), 8e-6, 1e-12);
  EXPECT_NEAR(t->steps[0].compute, 6e-6, 1e-12);
  EXPECT_NEAR(t->steps[0].idle, 2e-6, 1e-12);
  ASSERT_FALSE(t->warning_messages.empty());
  EXPECT_NE(t->warning_messages.back().find("whole trace"), std::string::npos);
  // Annotated steps win over inference.
  auto annotated = ImportTraceBuffer(kLegacy, "legacy.json");
  ASSERT_TRUE(annotated.ok());
  EXPECT_EQ(annotated->steps_from, StepSource::kProfilerStep);
}

TEST(Importer, RankFromFileName) {
  EXPECT_EQ(RankFromFileName("/x/trace_rank-3.json.gz"), 3);
  EXPECT_EQ(RankFromFileName("ddp_mlp_rank1.pt.trace.json"), 1);
  EXPECT_EQ(RankFromFileName("a/b_rank_12.json"), 12);
  EXPECT_EQ(RankFromFileName("a/b.json"), std::nullopt);
}

TEST(Importer, MissingFileAndEmptyFileAreErrors) {
  auto missing = ImportTrace("/nonexistent/trace.json");
  ASSERT_FALSE(missing.ok());
  std::string path = testing::WriteTemp("empty.json", "");
  auto empty = ImportTrace(path);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find(path), std::string::npos);
  std::filesystem::remove(path);
}

TEST(Importer, StepscopeStepRecords) {
  StepRecord r;
  r.rank = 2;
  r.step = 7;
  r.start = 1.0;
  r.end = 1.5;
  r.compute = 0.3;
  r.comm_busy = 0.2;
  r.exposed_comm = 0.05;
  r.input_wait = 0.1;
  r.backward_start = 1.15;
  r.script_comm = 0.025;
  r.collectives.push_back({0, 4096, 1.2, 1.25, 1.4, 1.0});
  std::string path = testing::WriteTemp("rank-2.steps.jsonl", "");
  ASSERT_TRUE(WriteStepRecords(path, {r}).ok());
  auto t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, TraceFormat::kStepscopeSteps);
  EXPECT_EQ(t->rank, 2);
  ASSERT_EQ(t->steps.size(), 1u);
  EXPECT_NEAR(t->steps[0].overlap, 0.15, 1e-12);
  EXPECT_NEAR(t->steps[0].idle, 0.05, 1e-12);
  auto back = t->ToStepRecords();
  EXPECT_NEAR(back[0].compute, 0.3, 1e-12);
  EXPECT_NEAR(back[0].collectives[0].ready, 1.2, 1e-12);
  ASSERT_TRUE(back[0].backward_start.has_value());
  EXPECT_NEAR(*back[0].backward_start, 1.15, 1e-12);
  EXPECT_EQ(back[0].script_comm, std::optional<double>(0.025));  // analyze keeps it
  std::filesystem::remove(path);
}

// Every real trace under tests/data/traces imports.
TEST(Importer, EveryRealTraceImports) {
  std::string dir = STEPSCOPE_TRACE_DATA_DIR;
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    std::string p = entry.path().string();
    if (!entry.is_regular_file() || p.find(".json") == std::string::npos) continue;
    ++files;
    auto t = ImportTrace(p);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_GT(t->events, 0u) << p;
    EXPECT_GE(t->rank, 0) << p;
    EXPECT_TRUE(t->world_size == -1 || t->world_size > t->rank) << p;
    double sum_step = 0;
    for (const ImportedStep& s : t->steps) {
      sum_step += s.step_time();
      EXPECT_GE(s.compute, 0);
      EXPECT_LE(s.compute, s.step_time() + 1e-9) << p;
      EXPECT_LE(s.overlap, s.comm_busy + 1e-9) << p;
      EXPECT_GE(s.idle, -1e-9) << p;
    }
    std::printf(
        "%-80s %-18s rank %3d/%4d clock %-14s steps %zu events %llu warnings %llu "
        "mean step %.3f ms\n",
        entry.path().filename().c_str(), TraceFormatName(t->format), t->rank, t->world_size,
        ClockKindName(t->clock), t->steps.size(), static_cast<unsigned long long>(t->events),
        static_cast<unsigned long long>(t->warnings),
        t->steps.empty() ? 0.0 : 1e3 * sum_step / t->steps.size());
    if (p.find("legacy") != std::string::npos) {
      EXPECT_EQ(t->format, TraceFormat::kLegacy);
      EXPECT_EQ(t->steps.size(), p.find("ddp_mlp") != std::string::npos ? 3u : 6u);
      // DDP launches each bucket's all-reduce from a backward hook: within backward (its
      // broadcast of rebuilt buckets is in its forward).
      for (const ImportedStep& s : t->steps) {
        ASSERT_TRUE(s.backward_start.has_value()) << p << " step " << s.step;
        EXPECT_GE(*s.backward_start, s.start) << p;
        EXPECT_LE(*s.backward_start, s.end) << p;
        for (const ImportedCollective& c : s.collectives) {
          if (c.name != "gloo:all_reduce") continue;
          EXPECT_LE(*s.backward_start, c.start) << p << " step " << s.step;
        }
      }
    }
  }
  EXPECT_GE(files, 10);
}

// The real Kineto CPU/gloo trace with its "ProfilerStep#N" annotations removed: the steps
// inferred from its optimizer steps agree with the annotated ones (5 steps, each within 2 %).
TEST(Importer, InferredStepsAgreeWithAnnotatedOnesOnARealTrace) {
  const std::string path =
      std::string(STEPSCOPE_TRACE_DATA_DIR) +
      "/pytorch-kineto-cpu-gloo/cpu_only__rank-34.OLDER_COMMIT_05cd72fe.pt.trace.json.gz";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  auto annotated = ImportTrace(path);
  ASSERT_TRUE(annotated.ok()) << annotated.status().message();
  auto src = OpenByteSource(path);
  ASSERT_TRUE(src.ok());
  std::string text(1 << 16, '\0'), all;
  for (auto got = (*src)->Read(text.data(), text.size()); got.ok() && *got > 0;
       got = (*src)->Read(text.data(), text.size())) {
    all.append(text.data(), *got);
  }
  nlohmann::json doc = nlohmann::json::parse(all);
  auto& events = doc["traceEvents"];
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const nlohmann::json& e) {
                                return e.value("name", "").rfind("ProfilerStep#", 0) == 0;
                              }),
               events.end());
  auto inferred = ImportTraceBuffer(doc.dump(), "stripped.json");
  ASSERT_TRUE(inferred.ok()) << inferred.status().message();
  EXPECT_EQ(inferred->steps_from, StepSource::kOptimizerStep);
  ASSERT_EQ(annotated->steps.size(), 5u);
  ASSERT_EQ(inferred->steps.size(), annotated->steps.size());
  for (size_t i = 0; i < inferred->steps.size(); ++i) {
    const double want = annotated->steps[i].step_time();
    EXPECT_NEAR(inferred->steps[i].step_time(), want, 0.02 * want) << "step " << i;
    EXPECT_NEAR(inferred->steps[i].compute, annotated->steps[i].compute,
                0.02 * annotated->steps[i].compute)
        << "step " << i;
  }
}

// stepscope's own trace, one step [1000, 1900) us: input [1000,1050), compute [1050,1650) and
// [1760,1860) = 700, exposed wait [1650,1760) = 110, comm [1510,1760) = 250 of which
// [1510,1650) = 140 hidden behind compute; bucket 0 ready at 1500.
TEST(Importer, StepscopeTraceHandBuilt) {
  const char kOwn[] = R"J({"traceEvents":[
{"ph":"X","name":"step 3","cat":"step","pid":1,"tid":1,"ts":1000.000,"dur":900.000,"args":{"loss":2.3,"warmup":true,"samples":32}},
{"ph":"X","name":"input wait","cat":"input","pid":1,"tid":1,"ts":1000.000,"dur":50.000},
{"ph":"X","name":"forward","cat":"compute","pid":1,"tid":1,"ts":1050.000,"dur":300.000},
{"ph":"X","name":"backward","cat":"compute","pid":1,"tid":1,"ts":1350.000,"dur":300.000},
{"ph":"i","name":"bucket 0 ready","pid":1,"tid":1,"ts":1500.000,"s":"t"},
{"ph":"X","name":"all-reduce bucket 0","cat":"comm","pid":1,"tid":2,"ts":1510.000,"dur":250.000,"args":{"bytes":4096,"step":3}},
{"ph":"X","name":"exposed comm wait","cat":"comm_wait","pid":1,"tid":1,"ts":1650.000,"dur":110.000},
{"ph":"X","name":"load batch","cat":"loader","pid":1,"tid":3,"ts":1100.000,"dur":500.000},
{"ph":"X","name":"optimizer","cat":"compute","pid":1,"tid":1,"ts":1760.000,"dur":100.000}]})J";
  auto t = ImportTraceBuffer(kOwn, "rank-1.trace.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, TraceFormat::kStepscopeTrace);
  EXPECT_EQ(t->clock, ClockKind::kAligned);
  EXPECT_EQ(t->rank, 1);
  ASSERT_EQ(t->steps.size(), 1u);
  const ImportedStep& s = t->steps[0];
  EXPECT_EQ(s.step, 3);
  EXPECT_TRUE(s.warmup);
  EXPECT_EQ(s.samples, 32);
  EXPECT_NEAR(s.compute, 700e-6, 1e-12);
  EXPECT_NEAR(s.input_wait, 50e-6, 1e-12);
  EXPECT_NEAR(s.exposed_comm, 110e-6, 1e-12);
  EXPECT_NEAR(s.comm_busy, 250e-6, 1e-12);
  EXPECT_NEAR(s.overlap, 140e-6, 1e-12);
  EXPECT_NEAR(s.idle, 40e-6, 1e-12);
  ASSERT_EQ(s.collectives.size(), 1u);
  EXPECT_NEAR(s.collectives[0].start, 1500e-6, 1e-12);
  EXPECT_EQ(s.collectives[0].bytes, 4096);
  ASSERT_TRUE(s.backward_start.has_value());
  EXPECT_NEAR(*s.backward_start, 1350e-6, 1e-12);
}

}  // namespace
}  // namespace stepscope::trace
