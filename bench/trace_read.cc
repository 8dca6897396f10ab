// Reads traces with the streaming reader and the importer; prints throughput and peak memory.
// Mode "bytes" only pulls the uncompressed bytes through the byte source (read(), or read() and
// inflate for gzip): the bound the others approach.
// Usage: bench_trace_read [--repeats N] FILE...
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "trace/byte_source.h"
#include "trace/importer.h"
#include "trace/reader.h"

int main(int argc, char** argv) {
  int repeats = 3;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: bench_trace_read [--repeats N] FILE...\n");
    return 2;
  }
  using Clock = std::chrono::steady_clock;
  for (const std::string& f : files) {
    for (const char* mode : {"bytes", "read", "import"}) {
      std::vector<double> secs;
      uint64_t bytes = 0, events = 0;
      size_t steps = 0;
      for (int r = 0; r < repeats; ++r) {
        auto t0 = Clock::now();
        if (std::string(mode) == "bytes") {
          auto src = stepscope::trace::OpenByteSource(f);
          if (!src.ok()) {
            std::fprintf(stderr, "%s\n", src.status().message().c_str());
            return 1;
          }
          std::vector<char> chunk(256 << 10);
          bytes = 0;
          while (true) {
            auto got = (*src)->Read(chunk.data(), chunk.size());
            if (!got.ok()) {
              std::fprintf(stderr, "%s\n", got.status().message().c_str());
              return 1;
            }
            if (*got == 0) break;
            bytes += *got;
          }
          events = 0;
        } else if (std::string(mode) == "read") {
          uint64_t n = 0;
          auto st = stepscope::trace::ReadChromeTrace(f, [&](const auto&) { ++n; });
          if (!st.ok()) {
            std::fprintf(stderr, "%s\n", st.status().message().c_str());
            return 1;
          }
          bytes = st->bytes;
          events = st->events;
        } else {
          auto t = stepscope::trace::ImportTrace(f);
          if (!t.ok()) {
            std::fprintf(stderr, "%s\n", t.status().message().c_str());
            return 1;
          }
          bytes = t->bytes;
          events = t->events;
          steps = t->steps.size();
        }
        secs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      }
      std::sort(secs.begin(), secs.end());
      double med = secs[secs.size() / 2];
      std::printf(
          "%-7s %s: %.1f MB in %.3f s (min %.3f, median; max %.3f): %.0f MB/s, "
          "%.2f M events/s, %zu steps\n",
          mode, f.c_str(), bytes / 1e6, med, secs.front(), secs.back(), bytes / 1e6 / med,
          events / 1e6 / med, steps);
      std::printf("RESULT %s_mb_per_s=%.1f\n", mode, bytes / 1e6 / med);
      std::printf("RESULT %s_best_mb_per_s=%.1f\n", mode, bytes / 1e6 / secs.front());
    }
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  std::printf("peak RSS: %.1f MB\nRESULT peak_rss_mb=%.1f\n", ru.ru_maxrss / 1024.0,
              ru.ru_maxrss / 1024.0);
  return 0;
}
