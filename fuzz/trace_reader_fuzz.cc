// Fuzz target: the streaming reader and the importer must return a value or a Status for any
// input (plain or gzip), never crash. Small batches exercise the refill paths.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/importer.h"
#include "trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  stepscope::trace::ReaderOptions options;
  options.batch_bytes = 1 + (size % 97);
  uint64_t events = 0;
  auto read = stepscope::trace::ReadChromeTraceBuffer(
      input, "fuzz.json", [&](const stepscope::trace::TraceEvent&) { ++events; }, options);
  (void)read;
  auto imported = stepscope::trace::ImportTraceBuffer(input, "fuzz.json");
  (void)imported;
  return 0;
}
