// Replays the fuzz corpus (fuzz/corpus/trace) and systematic mutations of it through the reader
// and the importer in the normal build: every prefix (truncation), every byte replaced by each JSON
// structural character, gzip of each. Each must give a value or a Status, never a crash; run
// under the sanitizers in the fuzz build for more.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "trace/importer.h"
#include "trace/reader.h"
#include "trace/test_util.h"

namespace stepscope::trace {
namespace {

std::vector<std::string> Corpus() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(STEPSCOPE_FUZZ_CORPUS_DIR)) {
    std::ifstream f(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    out.push_back(ss.str());
  }
  return out;
}

// Returns whether the input was accepted; any outcome but a crash passes.
bool Feed(const std::string& input, size_t batch) {
  ReaderOptions options;
  options.batch_bytes = batch;
  uint64_t events = 0;
  auto read = ReadChromeTraceBuffer(
      input, "replay.json", [&](const TraceEvent&) { ++events; }, options);
  auto imported = ImportTraceBuffer(input, "replay.json");
  if (read.ok()) {
    EXPECT_EQ(read->events, events);
  } else {
    EXPECT_NE(read.status().message().find("replay.json"), std::string::npos);
  }
  return read.ok() && imported.ok();
}

TEST(Replay, CorpusParses) {
  auto corpus = Corpus();
  ASSERT_GE(corpus.size(), 3u);
  int ok = 0;
  for (const std::string& c : corpus) ok += Feed(c, 4 << 20) ? 1 : 0;
  EXPECT_GE(ok, 3);
}

TEST(Replay, TruncationsAndBatchSizes) {
  for (const std::string& c : Corpus()) {
    for (size_t n = 0; n <= c.size(); ++n) {
      Feed(c.substr(0, n), 1 + n % 13);
    }
    // A cut gzip stream is an error too, not a crash.
    const std::string gz = testing::Gzip(c);
    for (size_t n = 0; n < gz.size(); n += 7) Feed(gz.substr(0, n), 64);
  }
}

TEST(Replay, StructuralByteMutations) {
  const char kBytes[] = {'{', '}', '[', ']', '"', '\\', ',', ':', '\0', '-'};
  for (const std::string& c : Corpus()) {
    for (size_t i = 0; i < c.size(); i += 3) {
      for (char b : kBytes) {
        std::string m = c;
        m[i] = b;
        Feed(m, 1 + i % 29);
      }
    }
  }
}

}  // namespace
}  // namespace stepscope::trace
