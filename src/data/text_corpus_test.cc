#include "data/text_corpus.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace stepscope::data {
namespace {

namespace fs = std::filesystem;
const char kFortunes[] = "/usr/share/games/fortunes";

class TextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("stepscope-text-" + std::to_string(getpid()) + "-" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST(StripFortuneSeparators, DropsSeparatorLinesAndJoinsEntries) {
  EXPECT_EQ(StripFortuneSeparators("A\nB\n%\nC\n%\n"), "A\nB\n\nC\n");
  EXPECT_EQ(StripFortuneSeparators("%\n%\nX\n%\n\n%\nY"), "X\n\n\n\nY");
  EXPECT_EQ(StripFortuneSeparators("100%\n% off\n"), "100%\n% off\n");  // not separators
  EXPECT_EQ(StripFortuneSeparators("a\r\n%\r\nb\r\n"), "a\r\n\nb\r\n");
}

TEST_F(TextTest, UserFileIsReadVerbatimAndWindowsShiftByOne) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += static_cast<char>('a' + i % 26);
  const auto path = Write("user.txt", text);
  auto split = LoadText(path, 8, 0.2);
  ASSERT_TRUE(split.ok()) << split.status().message();
  // 80 training bytes: windows of 9 at 0, 8, ..., 64 -> (80 - 1) / 8 = 9 windows.
  EXPECT_EQ(split->train->size(), 9);
  EXPECT_EQ(split->test->size(), 2);  // 20 bytes -> (20 - 1) / 8
  Batch batch;
  split->train->Fill({0, 8}, false, 0, &batch);
  EXPECT_EQ(batch.size, 2);
  ASSERT_EQ(batch.tokens.size(), 16u);
  ASSERT_EQ(batch.targets.size(), 16u);
  EXPECT_TRUE(batch.inputs.empty());
  for (int b = 0; b < 2; ++b) {
    const int start = b == 0 ? 0 : 64;
    for (int t = 0; t < 8; ++t) {
      EXPECT_EQ(batch.tokens[b * 8 + t], static_cast<unsigned char>(text[start + t]));
      EXPECT_EQ(batch.targets[b * 8 + t], static_cast<unsigned char>(text[start + t + 1]));
    }
  }
  // The test split starts right after the training bytes.
  split->test->Fill({1}, false, 0, &batch);
  EXPECT_EQ(batch.tokens[0], static_cast<unsigned char>(text[80 + 8]));
}

TEST_F(TextTest, TooShortFileNamesPathAndMinimum) {
  const auto path = Write("short.txt", "hello");
  auto split = LoadText(path, 8, 0.0);
  ASSERT_FALSE(split.ok());
  const std::string msg = split.status().message();
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("at least 9 bytes"), std::string::npos) << msg;

  auto held = LoadText(Write("mid.txt", std::string(15, 'x')), 8, 0.5);
  ASSERT_FALSE(held.ok());  // 7 bytes held out < one window of 9
  EXPECT_NE(held.status().message().find("at least 18 bytes"), std::string::npos)
      << held.status().message();
  EXPECT_TRUE(LoadText(Write("ok.txt", std::string(18, 'x')), 8, 0.5).ok());
}

TEST_F(TextTest, EmptyAndMissingFilesAreErrors) {
  auto empty = LoadText(Write("empty.txt", ""), 4, 0.1);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  const std::string missing = (dir_ / "missing.txt").string();
  auto gone = LoadText(missing, 4, 0.1);
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.status().message().find(missing), std::string::npos);
}

TEST_F(TextTest, DirectoryReadsSortedFilesSkipsIndexesAndOffUnlessAlone) {
  Write("b", "second\n%\n");
  Write("a", "first\n%\n");
  Write("a.dat", "binary index");
  Write("a.u8", "utf8 link");
  Write("off/c", "offensive\n%\n");
  auto text = ReadTextCorpus(dir_.string());
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "first\n\nsecond\n");

  const fs::path only_off = dir_ / "only";
  Write("only/off/c", "kept\n%\n");
  auto alone = ReadTextCorpus(only_off.string());
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(*alone, "kept\n");
}

TEST(TextCorpus, FortunesLoadWithoutSeparators) {
  auto text = ReadTextCorpus(kFortunes);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_GT(text->size(), 1000000u);
  EXPECT_EQ(text->find("\n%\n"), std::string::npos);
  EXPECT_NE(text->rfind("%\n", 0), 0u);

  auto split = LoadText(kFortunes, 64, 0.1);
  ASSERT_TRUE(split.ok()) << split.status().message();
  const int64_t n = static_cast<int64_t>(text->size());
  const int64_t held = static_cast<int64_t>(n * 0.1);
  EXPECT_EQ(split->train->size(), (n - held - 1) / 64);
  EXPECT_EQ(split->test->size(), (held - 1) / 64);
  Batch batch;
  split->train->Fill({0, 5, split->train->size() - 1}, false, 0, &batch);
  for (int b = 0; b < 3; ++b) {
    for (int t = 0; t + 1 < 64; ++t) {
      ASSERT_EQ(batch.targets[b * 64 + t], batch.tokens[b * 64 + t + 1]);
    }
  }
  for (int32_t v : batch.tokens) {
    ASSERT_GE(v, 0);
    ASSERT_LE(v, 255);
  }
}

}  // namespace
}  // namespace stepscope::data
