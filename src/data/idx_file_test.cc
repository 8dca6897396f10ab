#include "data/idx_file.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "data/fashion_mnist.h"

namespace stepscope::data {
namespace {

namespace fs = std::filesystem;
const char kRealDir[] = "/usr/share/datasets/fashion-mnist";

class IdxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("stepscope-idx-" + std::to_string(getpid()) + "-" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void PutBe32(std::vector<uint8_t>* out, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<uint8_t>(v >> s));
  }
  // Writes a gzip'd IDX file: header (magic, dims) then `payload` bytes.
  std::string WriteGz(const std::string& name, uint32_t magic, const std::vector<uint32_t>& dims,
                      const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> bytes;
    PutBe32(&bytes, magic);
    for (uint32_t d : dims) PutBe32(&bytes, d);
    bytes.insert(bytes.end(), payload.begin(), payload.end());
    const std::string path = (dir_ / name).string();
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    gzclose(f);
    return path;
  }
  // A consistent miniature dataset of `n` images (train and t10k alike).
  void WriteMiniDataset(uint32_t n_images, uint32_t n_labels) {
    for (const char* split : {"train", "t10k"}) {
      WriteGz(std::string(split) + "-images-idx3-ubyte.gz", kIdxImagesMagic, {n_images, 28, 28},
              std::vector<uint8_t>(n_images * 28 * 28, 128));
      WriteGz(std::string(split) + "-labels-idx1-ubyte.gz", kIdxLabelsMagic, {n_labels},
              std::vector<uint8_t>(n_labels, 3));
    }
  }

  fs::path dir_;
};

TEST_F(IdxTest, ReadsHandMadeFile) {
  const auto path = WriteGz("ok.gz", kIdxImagesMagic, {2, 3, 4}, std::vector<uint8_t>(24, 7));
  auto arr = ReadIdxFile(path, kIdxImagesMagic);
  ASSERT_TRUE(arr.ok()) << arr.status().message();
  EXPECT_EQ(arr->dims, (std::vector<uint32_t>{2, 3, 4}));
  EXPECT_EQ(arr->data, std::vector<uint8_t>(24, 7));
}

TEST_F(IdxTest, BadMagicNamesFileAndField) {
  const auto path = WriteGz("bad.gz", 1234, {5}, std::vector<uint8_t>(5, 0));
  auto arr = ReadIdxFile(path, kIdxLabelsMagic);
  ASSERT_FALSE(arr.ok());
  const std::string msg = arr.status().message();
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("'magic'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1234"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2049"), std::string::npos) << msg;
}

TEST_F(IdxTest, TruncatedDataNamesFileAndField) {
  const auto path = WriteGz("short.gz", kIdxImagesMagic, {2, 28, 28}, std::vector<uint8_t>(1000));
  auto arr = ReadIdxFile(path, kIdxImagesMagic);
  ASSERT_FALSE(arr.ok());
  const std::string msg = arr.status().message();
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("'data'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1568"), std::string::npos) << msg;  // 2 * 28 * 28 announced
}

TEST_F(IdxTest, TruncatedHeaderNamesField) {
  const auto path = WriteGz("hdr.gz", kIdxImagesMagic, {2}, {});  // dims 2 and 3 missing
  auto arr = ReadIdxFile(path, kIdxImagesMagic);
  ASSERT_FALSE(arr.ok());
  EXPECT_NE(arr.status().message().find("'dim1'"), std::string::npos) << arr.status().message();
}

TEST_F(IdxTest, TruncatedGzipStreamIsAnError) {
  const auto path = WriteGz("cut.gz", kIdxImagesMagic, {50, 28, 28}, std::vector<uint8_t>(39200));
  const auto full = fs::file_size(path);
  fs::resize_file(path, full / 2);
  auto arr = ReadIdxFile(path, kIdxImagesMagic);
  ASSERT_FALSE(arr.ok());
  EXPECT_NE(arr.status().message().find(path), std::string::npos) << arr.status().message();
}

TEST_F(IdxTest, MissingFileIsNamed) {
  const std::string path = (dir_ / "nope.gz").string();
  auto arr = ReadIdxFile(path, kIdxImagesMagic);
  ASSERT_FALSE(arr.ok());
  EXPECT_NE(arr.status().message().find(path), std::string::npos);
}

TEST_F(IdxTest, MiniDatasetLoads) {
  WriteMiniDataset(3, 3);
  auto split = LoadFashionMnist(dir_.string());
  ASSERT_TRUE(split.ok()) << split.status().message();
  EXPECT_EQ(split->train->size(), 3);
  EXPECT_EQ(split->test->size(), 3);
}

TEST_F(IdxTest, CountMismatchNamesBothFilesAndField) {
  WriteMiniDataset(3, 4);
  auto split = LoadFashionMnist(dir_.string());
  ASSERT_FALSE(split.ok());
  const std::string msg = split.status().message();
  EXPECT_NE(msg.find("train-images-idx3-ubyte.gz"), std::string::npos) << msg;
  EXPECT_NE(msg.find("train-labels-idx1-ubyte.gz"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'count'"), std::string::npos) << msg;
}

TEST_F(IdxTest, WrongImageSideNamesField) {
  WriteMiniDataset(2, 2);
  WriteGz("train-images-idx3-ubyte.gz", kIdxImagesMagic, {2, 28, 27},
          std::vector<uint8_t>(2 * 28 * 27));
  auto split = LoadFashionMnist(dir_.string());
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("'dim2'"), std::string::npos) << split.status().message();
}

TEST_F(IdxTest, LabelOutOfRangeIsAnError) {
  WriteMiniDataset(2, 2);
  WriteGz("t10k-labels-idx1-ubyte.gz", kIdxLabelsMagic, {2}, {1, 10});
  auto split = LoadFashionMnist(dir_.string());
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("t10k-labels-idx1-ubyte.gz"), std::string::npos);
}

TEST(FashionMnist, RealFilesLoad) {
  auto split = LoadFashionMnist(kRealDir);
  ASSERT_TRUE(split.ok()) << split.status().message();
  const auto* train = dynamic_cast<const ImageDataset*>(split->train.get());
  const auto* test = dynamic_cast<const ImageDataset*>(split->test.get());
  ASSERT_NE(train, nullptr);
  ASSERT_NE(test, nullptr);
  EXPECT_EQ(train->size(), 60000);
  EXPECT_EQ(test->size(), 10000);
  EXPECT_EQ(train->label(0), 9);  // the first training image is an ankle boot
  std::vector<int> per_class(kNumClasses, 0);
  for (int64_t i = 0; i < train->size(); ++i) {
    ASSERT_GE(train->label(i), 0);
    ASSERT_LT(train->label(i), kNumClasses);
    ++per_class[train->label(i)];
  }
  for (int c : per_class) EXPECT_EQ(c, 6000);  // the training set is balanced

  Batch batch;
  train->Fill({0, 1}, false, 0, &batch);
  EXPECT_EQ(batch.size, 2);
  ASSERT_EQ(batch.inputs.size(), 2u * 28 * 28);
  EXPECT_TRUE(batch.tokens.empty());
  EXPECT_EQ(batch.targets, (std::vector<int32_t>{9, train->label(1)}));
  for (int p = 0; p < 28 * 28; ++p) {
    const float want = (train->image(0)[p] / 255.0f - kPixelMean) / kPixelStd;
    ASSERT_FLOAT_EQ(batch.inputs[p], want);
  }
  // Normalised mean over the first image is finite and in the expected range of the transform.
  const float lo = (0.0f - kPixelMean) / kPixelStd, hi = (1.0f - kPixelMean) / kPixelStd;
  for (float v : batch.inputs) {
    ASSERT_GE(v, lo - 1e-6f);
    ASSERT_LE(v, hi + 1e-6f);
  }
}

}  // namespace
}  // namespace stepscope::data
