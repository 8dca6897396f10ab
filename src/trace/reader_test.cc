#include "trace/reader.h"

#include <gtest/gtest.h>

#include "trace/chrome_writer.h"
#include "trace/test_util.h"

namespace stepscope::trace {
namespace {

using testing::Gzip;
using testing::WriteTemp;

struct Seen {
  std::string name, cat, pid_str;
  char ph;
  double ts, dur;
  int64_t pid, tid, stream;
};

Result<ReadStats> ReadAll(const std::string& data, std::vector<Seen>* out, ReaderOptions opt = {}) {
  return ReadChromeTraceBuffer(
      data, "mem.json",
      [&](const TraceEvent& e) {
        out->push_back({std::string(e.name), std::string(e.cat), std::string(e.pid_str), e.ph, e.ts,
                        e.dur, e.pid, e.tid, e.stream});
      },
      opt);
}

const char kObject[] =
    R"({"schemaVersion":1,"distributedInfo":{"rank":3,"world_size":8},)"
    R"("traceEvents":[{"ph":"X","cat":"kernel","name":"k\"1","pid":0,"tid":7,"ts":10,"dur":5.5,)"
    R"("args":{"stream":7}}, {"ph":"i","name":"mark","pid":"CPU functions","tid":1,"ts":12}],)"
    R"("deviceProperties":[{"id":0}]})";

TEST(Reader, ObjectFormWithMetadata) {
  std::vector<Seen> ev;
  auto st = ReadAll(kObject, &ev);
  ASSERT_TRUE(st.ok()) << st.status().message();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].name, "k\"1");
  EXPECT_EQ(ev[0].ph, 'X');
  EXPECT_DOUBLE_EQ(ev[0].dur, 5.5);
  EXPECT_EQ(ev[0].stream, 7);
  EXPECT_EQ(ev[1].pid_str, "CPU functions");
  EXPECT_EQ(ev[1].tid, 1);
  EXPECT_EQ(st->metadata["distributedInfo"]["rank"], 3);
  EXPECT_EQ(st->metadata["deviceProperties"][0]["id"], 0);
  EXPECT_FALSE(st->array_form);
}

TEST(Reader, GzipAndTinyBatchesGiveTheSameEvents) {
  std::vector<Seen> a, b;
  ASSERT_TRUE(ReadAll(kObject, &a).ok());
  ReaderOptions tiny;
  tiny.batch_bytes = 7;  // forces refills in the middle of strings and events
  auto st = ReadAll(Gzip(kObject), &b, tiny);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_TRUE(st->gzip);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].name, b[i].name);
}

TEST(Reader, BareArrayForm) {
  std::vector<Seen> ev;
  auto st = ReadAll(R"( [ {"name":"a","ph":"X","ts":1,"dur":2,"pid":"CPU functions","tid":1},)"
                    R"({"name":"b","ph":"X","ts":3,"dur":1,"pid":"CPU functions","tid":1} ] )",
                    &ev);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_TRUE(st->array_form);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].name, "b");
}

TEST(Reader, EmptyAndWrongTopLevelAreErrors) {
  std::vector<Seen> ev;
  auto empty = ReadAll("", &ev);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("mem.json"), std::string::npos);
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  EXPECT_FALSE(ReadAll("   \n", &ev).ok());
  EXPECT_FALSE(ReadAll("42", &ev).ok());
  EXPECT_FALSE(ReadAll(R"({"other":1})", &ev).ok());
  EXPECT_TRUE(ReadAll("[]", &ev).ok());
  EXPECT_TRUE(ReadAll(R"({"traceEvents":[]})", &ev).ok());
}

TEST(Reader, TruncatedFileNamesFileAndOffset) {
  std::string text = kObject;
  for (size_t cut : {size_t{5}, size_t{70}, size_t{120}, text.size() - 40}) {
    std::vector<Seen> ev;
    std::string path = WriteTemp("trunc.json", text.substr(0, cut));
    auto st = ReadChromeTrace(path, [](const TraceEvent&) {});
    ASSERT_FALSE(st.ok()) << "cut at " << cut;
    EXPECT_NE(st.status().message().find(path), std::string::npos) << st.status().message();
    EXPECT_NE(st.status().message().find("byte"), std::string::npos) << st.status().message();
    std::filesystem::remove(path);
  }
  // Truncated gzip stream.
  std::string gz = Gzip(text);
  std::vector<Seen> ev;
  EXPECT_FALSE(ReadAll(gz.substr(0, gz.size() / 2), &ev).ok());
}

TEST(Reader, GzipFilesAreInflatedAheadOfTheReader) {
  // Enough events for several prefetched chunks: the file gives the events the buffer gives.
  std::string text = "[";
  for (int i = 0; i < 60000; ++i) {
    text += std::string(i ? "," : "") + R"({"ph":"X","name":"op)" + std::to_string(i) +
            R"(","ts":)" + std::to_string(i) + R"(,"dur":1,"pid":1,"tid":1,"args":{"pad":")" +
            std::string(i % 50, 'x') + "\"}}";
  }
  text += "]";
  std::vector<Seen> from_memory;
  ASSERT_TRUE(ReadAll(text, &from_memory).ok());
  const std::string gz = Gzip(text);
  std::string path = WriteTemp("prefetch.json.gz", gz);
  uint64_t n = 0;
  bool same = true;
  auto st = ReadChromeTrace(path, [&](const TraceEvent& e) {
    same = same && n < from_memory.size() && e.name == from_memory[n].name && e.ts == n;
    ++n;
  });
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_TRUE(st->gzip);
  EXPECT_EQ(n, 60000u);
  EXPECT_TRUE(same);
  EXPECT_EQ(st->bytes, text.size());
  // A truncated gzip file is an error naming it, after the events before the cut.
  std::string cut = WriteTemp("prefetch_cut.json.gz", gz.substr(0, gz.size() / 2));
  n = 0;
  auto bad = ReadChromeTrace(cut, [&](const TraceEvent&) { ++n; });
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(cut), std::string::npos) << bad.status().message();
  EXPECT_GT(n, 0u);
  // A reader that stops early (corrupt JSON at the start) returns while the worker still has
  // data to inflate.
  std::string early = WriteTemp("prefetch_early.json.gz", Gzip("[{\"ph\":tru}," + text.substr(1)));
  EXPECT_FALSE(ReadChromeTrace(early, [](const TraceEvent&) {}).ok());
  for (const std::string& p : {path, cut, early}) std::filesystem::remove(p);
}

TEST(Reader, CorruptEventIsLocated) {
  std::vector<Seen> ev;
  auto st = ReadAll(R"({"traceEvents":[{"ph":"X","ts":1},{"ph":"X","ts":tru},{"ph":"i"}]})", &ev);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("byte 34"), std::string::npos) << st.status().message();
}

TEST(Reader, NonObjectElementsAreCountedWarnings) {
  std::vector<Seen> ev;
  auto st = ReadAll(R"([1, "x", {"ph":"X","name":"ok"}, null])", &ev);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(ev.size(), 1u);
  EXPECT_EQ(st->warnings, 3u);
}

TEST(Reader, WriterOutputReadsBackWithHostileNames) {
  const std::string hostile = "q\"b\\s\n\t\x01</script>";
  std::string path = WriteTemp("roundtrip.json", "");
  {
    auto w = ChromeTraceWriter::Open(path);
    ASSERT_TRUE(w.ok());
    (*w)->ThreadName(2, 1, hostile);
    for (int i = 0; i < 1000; ++i) {
      (*w)->Complete(2, 1, hostile, "compute", i * 1e-3, 0.5e-3, {{"step", i}});
    }
    (*w)->Metadata("distributedInfo", {{"rank", 2}, {"world_size", 4}});
    ASSERT_TRUE((*w)->Close().ok());
  }
  int n = 0;
  bool names_ok = true;
  ReaderOptions opt;
  opt.batch_bytes = 4096;
  auto st = ReadChromeTrace(
      path,
      [&](const TraceEvent& e) {
        if (e.ph == 'X') {
          names_ok = names_ok && e.name == hostile && e.step == n &&
                     std::abs(e.ts - n * 1e3) < 1e-6 && std::abs(e.dur - 500) < 1e-6;
          ++n;
        } else {
          names_ok = names_ok && e.meta_name == hostile;
        }
      },
      opt);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(n, 1000);
  EXPECT_TRUE(names_ok);
  EXPECT_EQ(st->metadata["distributedInfo"]["world_size"], 4);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace stepscope::trace
