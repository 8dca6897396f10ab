// Realistic Diagnosis objects for the report's tests, built by the analysis from synthetic step
// records (analysis/synthetic_run.h): a curve at 1, 2 and 4 replicas with a straggler at N=4,
// ablations, a device price, optionally a re-measured curve after levers.
#pragma once

#include <string>

#include "core/status.h"
#include "decide/diagnosis.h"

namespace stepscope::report {

// A workload name, host name and trace name that try to break out of HTML and <script>.
inline constexpr const char* kHostileName =
    "</script><img src=x onerror=alert(1)> \"quoted\" & 'single' <!-- <b>bold</b>";

struct TestDiagnosisOptions {
  bool hostile = false;   // hostile strings in workload, emulation parameters and warnings
  bool after = false;     // add a re-measured curve after two levers
  bool emulated = false;  // mark devices as emulated
  // give the verdict that counts (after the levers, when there are any) priced options: stay,
  // a lever, fewer and more devices with it, a faster link (hostile labels with `hostile`)
  bool priced = false;
};

Result<decide::Diagnosis> MakeTestDiagnosis(const TestDiagnosisOptions& options = {});

// How many times `needle` occurs in `haystack` (overlapping occurrences too).
size_t Count(const std::string& haystack, const std::string& needle);

// A page's markup outside its script elements (where an injected element would show); sets
// *data_block_clean to whether the JSON data block holds no '<'.
std::string MarkupOutsideScripts(const std::string& page, bool* data_block_clean);

}  // namespace stepscope::report
