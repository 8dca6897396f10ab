// Fuzz target: rank-R.steps.jsonl, line by line as ReadStepRecords reads it. Every line must give
// a record or a Status naming the line, never a crash or undefined behaviour; an accepted record
// must write back to a line that reads again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/step_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  int line_no = 0;
  while (!input.empty()) {
    const size_t newline = input.find('\n');
    const std::string line(input.substr(0, newline));
    input = newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);
    const std::string where = "fuzz.steps.jsonl:" + std::to_string(++line_no);
    stepscope::Result<stepscope::StepRecord> record = stepscope::StepRecordFromJson(line, where);
    if (!record.ok()) {
      if (record.status().message().find(where) == std::string::npos) std::abort();
      continue;
    }
    auto again = stepscope::StepRecordFromJson(stepscope::StepRecordToJson(*record), where);
    if (!again.ok() || again->step != record->step || again->rank != record->rank ||
        again->collectives.size() != record->collectives.size()) {
      std::abort();
    }
  }
  return 0;
}
