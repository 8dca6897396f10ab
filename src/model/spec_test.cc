#include "model/spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/simulate.h"

namespace stepscope::model {
namespace {

// 25 M fp32 parameters (100 MB of gradient), 0.12 s of compute per micro-batch of 32, 8 devices
// per host on 100 GB/s and 2 us, hosts on 10 GB/s and 20 us; one bucket, reduced after backward.
constexpr const char* kSpec = R"({
  "gradient_bytes": 100000000,
  "micro_batch": 32,
  "compute_s": 0.12,
  "optimizer_s": 0.004,
  "devices_per_host": 8,
  "intra_host": {"gbps": 100, "latency_us": 2},
  "inter_host": {"gbps": 10, "latency_us": 20},
  "bucket_mb": 1000,
  "overlap": false
})";

StepModel Must(Result<StepModel> r) {
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : StepModel{};
}

TEST(ModelFromSpec, ConstantsAsDescribed) {
  const StepModel m = Must(ModelFromSpec(kSpec, "plan.json"));
  EXPECT_NEAR(m.forward_c1.estimate.value, 0.12 / 3 / 32, 1e-15);  // backward share 2/3
  EXPECT_NEAR(m.backward_c1.estimate.value, 0.08 / 32, 1e-15);
  EXPECT_TRUE(m.forward_c0.assumed);
  EXPECT_EQ(m.gradient_bytes, 100000000);
  EXPECT_EQ(m.reference.batch, 32);
  EXPECT_EQ(m.reference.dtype, "fp32");
  ASSERT_TRUE(m.hosts.has_value());
  EXPECT_EQ(m.hosts->devices_per_host, 8);
  EXPECT_EQ(m.hosts->algorithm, CrossHostAlgorithm::kHierarchical);
  // Weights and gradients (4 bytes each) and two AdamW moments per parameter.
  EXPECT_EQ(m.memory_fixed, 25000000LL * 16);
}

TEST(ModelFromSpec, PredictsTheHandComputedStep) {
  const StepModel m = Must(ModelFromSpec(kSpec, "plan.json"));
  Scenario s;
  s.replicas = 32;
  Result<Prediction> p = Predict(m, s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  // Inside a host: 14 x 2 us + 14/8 x 100 MB / 100 GB/s; between 4 hosts: 6 x 20 us + 6/4 of
  // the 12.5 MB shard at 10 GB/s.
  const double comm = 14 * 2e-6 + 14.0 / 8 * 1e8 / 100e9 + 6 * 20e-6 + 6.0 / 4 * 12.5e6 / 10e9;
  EXPECT_NEAR(p->parts.exposed_comm, comm, 1e-9);
  EXPECT_NEAR(p->step_s.value, 0.124 + comm, 1e-9);
  EXPECT_NEAR(p->samples_per_s.value, 32 * 32 / (0.124 + comm), 1e-6);
  EXPECT_NEAR(p->efficiency.value, 0.124 / (0.124 + comm), 1e-9);
  // What-ifs still apply: bf16 on the wire halves every byte term of the given links.
  s.dtype = "bf16";
  const double half = 14 * 2e-6 + 14.0 / 8 * 5e7 / 100e9 + 6 * 20e-6 + 6.0 / 4 * 6.25e6 / 10e9;
  EXPECT_NEAR(Predict(m, s)->parts.exposed_comm, half, 1e-9);
}

TEST(ModelFromSpec, ParametersAndPrecisionGiveTheGradient) {
  const StepModel m = Must(ModelFromSpec(R"({"parameters": 1000, "dtype": "bf16",
      "micro_batch": 4, "compute_s": 0.01, "backward_share": 0.5,
      "inter_host": {"gbps": 1}, "device_memory_gb": 1, "algorithm": "ring"})",
                                         "p.json"));
  EXPECT_EQ(m.gradient_bytes, 4000);  // fp32-equivalent; the wire is bf16
  EXPECT_EQ(m.reference.dtype, "bf16");
  EXPECT_NEAR(m.forward_c1.estimate.value, 0.005 / 4, 1e-15);
  EXPECT_EQ(m.hosts->algorithm, CrossHostAlgorithm::kRing);
  EXPECT_EQ(m.memory_fixed, 1000 * (2 + 2 + 8));
  ASSERT_TRUE(m.device_memory_gb.has_value());
}

TEST(ModelFromSpec, TheDeviceMemoryTurnsABatchThatDoesNotFitIntoAccumulation) {
  // 1 GiB of activations per sample and 16 GiB of memory: at most 15 fit, and the micro-batch
  // of 32 becomes 8 x 4, the largest that fits and divides the 32 samples per step.
  const StepModel m = Must(ModelFromSpec(R"({"parameters": 1000, "micro_batch": 32,
      "compute_s": 0.1, "inter_host": {"gbps": 10}, "device_memory_gb": 16,
      "activation_bytes_per_sample": 1073741824})",
                                         "m.json"));
  Scenario s;
  s.replicas = 2;
  Result<Prediction> p = Predict(m, s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->batch, 8);
  EXPECT_EQ(p->accum, 4);
  EXPECT_NE(p->memory_note.find("does not fit"), std::string::npos);
  EXPECT_NE(p->memory_note.find("the same 32 samples per step"), std::string::npos);
  // 31 samples per step: only a micro-batch of 1 divides them.
  s.batch = 31;
  p = Predict(m, s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->batch, 1);
  EXPECT_EQ(p->accum, 31);
}

TEST(ModelFromSpec, BadInputNamesTheFileAndTheField) {
  const struct {
    const char* text;
    const char* field;
  } cases[] = {
      {R"({"micro_batch": 32, "compute_s": 0.1, "inter_host": {"gbps": 1}})", "gradient_bytes"},
      {R"({"gradient_bytes": 8, "micro_batch": 32, "inter_host": {"gbps": 1}})", "compute_s"},
      {R"({"gradient_bytes": -8, "micro_batch": 32, "compute_s": 0.1,
           "inter_host": {"gbps": 1}})",
       "gradient_bytes"},
      {R"({"gradient_bytes": 8, "parameters": 2, "micro_batch": 32, "compute_s": 0.1,
           "inter_host": {"gbps": 1}})",
       "parameters"},
      {R"({"gradient_bytes": 8, "micro_batch": 0, "compute_s": 0.1, "inter_host": {"gbps": 1}})",
       "micro_batch"},
      {R"({"gradient_bytes": 8, "micro_batch": 2.5, "compute_s": 0.1,
           "inter_host": {"gbps": 1}})",
       "micro_batch"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": "fast",
           "inter_host": {"gbps": 1}})",
       "compute_s"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": 0.1, "backward_share": 0,
           "inter_host": {"gbps": 1}})",
       "backward_share"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": 0.1})", "inter_host"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": 0.1, "devices_per_host": 8,
           "inter_host": {"gbps": 1}})",
       "intra_host"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": 0.1,
           "inter_host": {"gbps": -1}})",
       "gbps"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": 0.1,
           "inter_host": {"gbps": 1, "latency": 5}})",
       "latency"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": 0.1, "wire_dtype": "int8",
           "inter_host": {"gbps": 1}})",
       "wire_dtype"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": 0.1, "algorithm": "tree",
           "inter_host": {"gbps": 1}})",
       "algorithm"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": 0.1, "device_memory_gb": -80,
           "inter_host": {"gbps": 1}})",
       "device_memory_gb"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": 0.1, "overlap": "yes",
           "inter_host": {"gbps": 1}})",
       "overlap"},
      {R"({"gradient_bytes": 8, "micro_batch": 2, "compute_s": 0.1, "gpus": 8,
           "inter_host": {"gbps": 1}})",
       "gpus"},
      {R"({"gradient_bytes": 1e300, "micro_batch": 2, "compute_s": 0.1,
           "inter_host": {"gbps": 1}})",
       "gradient_bytes"},
  };
  for (const auto& c : cases) {
    Result<StepModel> r = ModelFromSpec(c.text, "plan.json");
    ASSERT_FALSE(r.ok()) << c.text;
    const std::string message = r.status().message();
    EXPECT_EQ(message.rfind("plan.json: ", 0), 0u) << message;
    EXPECT_NE(message.find(std::string("'") + c.field + "'"), std::string::npos) << message;
  }
  for (const char* text : {"", "[1, 2]", "{\"gradient_bytes\": ", "42"}) {
    Result<StepModel> r = ModelFromSpec(text, "plan.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().message().rfind("plan.json: ", 0), 0u) << r.status().message();
  }
}

TEST(ModelFromSpec, AcrossHostsWithoutAnInterHostLinkIsRefusedAtThatReplicaCount) {
  const StepModel m = Must(ModelFromSpec(R"({"gradient_bytes": 8000000, "micro_batch": 8,
      "compute_s": 0.1, "devices_per_host": 8, "intra_host": {"gbps": 100}})",
                                         "one_host.json"));
  Scenario s;
  s.replicas = 8;
  EXPECT_TRUE(Predict(m, s).ok());
  s.replicas = 16;
  Result<Prediction> p = Predict(m, s);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("inter-host"), std::string::npos);
}

TEST(ModelFromSpec, OneDevicePerHostIsARingOfHostsAndMoreNeedAnIntraHostLink) {
  const StepModel m = Must(ModelFromSpec(R"({"gradient_bytes": 8000000, "micro_batch": 8,
      "compute_s": 0.1, "inter_host": {"gbps": 10, "latency_us": 20}, "overlap": false})",
                                         "hosts.json"));
  Scenario s;
  s.replicas = 4;
  Result<Prediction> p = Predict(m, s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NEAR(p->parts.exposed_comm, 6 * 20e-6 + 6.0 / 4 * 8e6 / 10e9, 1e-12);
  // Several devices per host asked on the command line, without a link between them.
  s.devices_per_host = 2;
  p = Predict(m, s);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("--intra-link"), std::string::npos);
  s.intra_link = LinkAlphaBeta(100, 0);
  EXPECT_TRUE(Predict(m, s).ok());
}

// The fuzz target's seed corpus, replayed in the normal build: the seeds that are specs are
// read and predicted at one host and across many; the others are refused with a message.
TEST(ModelFromSpec, ReplaysTheFuzzSeedCorpus) {
  int models = 0, refused = 0;
  for (const auto& e : std::filesystem::directory_iterator(STEPSCOPE_SPEC_CORPUS_DIR)) {
    std::ifstream in(e.path());
    std::ostringstream text;
    text << in.rdbuf();
    Result<StepModel> m = ModelFromSpec(text.str(), e.path().filename().string());
    if (!m.ok()) {
      EXPECT_NE(m.status().message().find("field '"), std::string::npos) << m.status().message();
      ++refused;
      continue;
    }
    ++models;
    for (int n : {1, 8, 4096}) {
      Scenario s;
      s.replicas = n;
      Result<Prediction> p = Predict(*m, s);
      ASSERT_TRUE(p.ok()) << e.path() << ": " << p.status().message();
      EXPECT_GT(p->samples_per_s.value, 0) << e.path();
    }
  }
  EXPECT_GE(models, 2);
  EXPECT_GE(refused, 1);
}

}  // namespace
}  // namespace stepscope::model
