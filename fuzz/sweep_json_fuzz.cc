// Fuzz target: sweep.json as a resumed diagnose reads it. Any input gives the stored runs or a
// Status naming the file and telling what to do.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "sweep/sweep_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = "fuzz/sweep.json";
  // The workload of the seed corpus, so that mutations reach the runs.
  const std::vector<std::string> workload = {"--model", "mlp", "--batch", "8"};
  auto runs = stepscope::sweep::ParseSweepManifest(text, path, workload);
  if (!runs.ok() && runs.status().message().find(path) == std::string::npos) std::abort();
  return 0;
}
