#include "train/device_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace stepscope::train {
namespace {

std::string FreshPath(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "stepscope-device-file";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / (name + ".json")).string();
  std::filesystem::remove(path);
  return path;
}

TEST(DeviceFile, MissingFileHasNoDevice) {
  const auto found = FindDevice(FreshPath("missing"), "mlp");
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_FALSE(found.value().has_value());
}

TEST(DeviceFile, RecordedDeviceIsFoundByShapeOnly) {
  const std::string path = FreshPath("roundtrip");
  ASSERT_TRUE(RecordDevice(path, {"shape a", {1e-3, 2e-3}, "runs/baseline-n1"}).ok());
  ASSERT_TRUE(RecordDevice(path, {"shape b", {5e-4}, "runs/double_batch-n4"}).ok());
  const auto a = FindDevice(path, "shape a");
  ASSERT_TRUE(a.ok() && a.value().has_value());
  EXPECT_EQ(a.value()->cost_per_work, (std::vector<Seconds>{1e-3, 2e-3}));
  EXPECT_EQ(a.value()->calibrated_by, "runs/baseline-n1");
  const auto b = FindDevice(path, "shape b");
  ASSERT_TRUE(b.ok() && b.value().has_value());
  EXPECT_EQ(b.value()->cost_per_work, (std::vector<Seconds>{5e-4}));
  const auto c = FindDevice(path, "shape c");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c.value().has_value());
  // Recording a shape again replaces it.
  ASSERT_TRUE(RecordDevice(path, {"shape a", {3e-3}, "runs/x"}).ok());
  EXPECT_EQ(FindDevice(path, "shape a").value()->cost_per_work, (std::vector<Seconds>{3e-3}));
  EXPECT_TRUE(FindDevice(path, "shape b").value().has_value());
}

TEST(DeviceFile, ShapeSeparatesWhatChangesTheSegments) {
  TrainOptions o;
  const std::string base = ComputeShape(o, "mlp 784-64-10");
  EXPECT_NE(ComputeShape(o, "mlp 784-128-10"), base);
  TrainOptions doubled = o;
  doubled.batch *= 2;
  EXPECT_NE(ComputeShape(doubled, "mlp 784-64-10"), base);
  // Replicas, reduction, buckets, wire precision and the loader do not change the device: the
  // model's layers split backward whatever the bucket size.
  TrainOptions ablated = o;
  ablated.reducer.bucket_mb = 1;
  ablated.reducer.overlap = false;
  ablated.reducer.reduce = false;
  ablated.reducer.dtype = comm::WireDtype::kBf16;
  ablated.loader_workers = 4;
  ablated.synthetic_input = true;
  EXPECT_EQ(ComputeShape(ablated, "mlp 784-64-10"), base);
}

TEST(DeviceFile, BadFileNamesFileAndField) {
  const std::string path = FreshPath("bad");
  {
    std::ofstream(path) << R"({"schema": "stepscope.device/1", "devices": [{"shape": "a",
        "cost_per_work_s": [0.001, -1]}]})";
  }
  const auto found = FindDevice(path, "a");
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.status().message().find(path), std::string::npos);
  EXPECT_NE(found.status().message().find("cost_per_work_s"), std::string::npos);
  // Never overwritten by a record: what is there may be another sweep's device.
  EXPECT_FALSE(RecordDevice(path, {"b", {1e-3}, "r"}).ok());
  { std::ofstream(path) << "{not json"; }
  const auto garbled = FindDevice(path, "a");
  ASSERT_FALSE(garbled.ok());
  EXPECT_NE(garbled.status().message().find("delete it"), std::string::npos);
}

TEST(DeviceFile, AFileWrittenWhenTheShapeHeldTheBucketSizeStillGivesItsDevice) {
  // A resumed sweep whose file holds the bucket size: its baselines paced to the 25 MiB device,
  // recorded first.
  const std::string path = FreshPath("legacy");
  const std::string shape = "mlp 784-64-10; optimizer sgd; batch 4; accum 1";
  ASSERT_TRUE(RecordDevice(path, {shape + "; bucket 25 MiB", {1e-3}, "runs/baseline-n1"}).ok());
  ASSERT_TRUE(RecordDevice(path, {shape + "; bucket 1.78 MiB", {2e-3}, "runs/lever-n4"}).ok());
  auto found = FindDevice(path, shape);
  ASSERT_TRUE(found.ok()) << found.status().message();
  ASSERT_TRUE(found.value().has_value());
  EXPECT_EQ(found.value()->cost_per_work, (std::vector<Seconds>{1e-3}));
  EXPECT_EQ(found.value()->calibrated_by, "runs/baseline-n1");
  EXPECT_FALSE(FindDevice(path, shape + "; variable length").value().has_value());
  // A device recorded under the shape itself comes first.
  ASSERT_TRUE(RecordDevice(path, {shape, {3e-3}, "runs/x"}).ok());
  EXPECT_EQ(FindDevice(path, shape).value()->cost_per_work, (std::vector<Seconds>{3e-3}));
}

}  // namespace
}  // namespace stepscope::train
