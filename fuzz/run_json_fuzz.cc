// Fuzz target: run.json as diagnose and predict read it (the configuration and model sizes, and
// how well the emulation was honoured). Any input gives a value or a Status naming the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sweep/run_records.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = "fuzz/run.json";
  auto summary = stepscope::sweep::RunSummaryFromText(text, path);
  if (!summary.ok() && summary.status().message().find(path) == std::string::npos) std::abort();
  if (summary.ok() && (summary->replicas < 1 || summary->batch < 1 || summary->accum < 1)) {
    std::abort();
  }
  auto pacing = stepscope::sweep::RunPacingFromText(text, path);
  if (!pacing.ok() && pacing.status().message().find(path) == std::string::npos) std::abort();
  return 0;
}
