// report_fixture OUT.json [--hostile] [--after] [--emulated] [--priced]: writes a diagnosis.json
// made by the analysis from synthetic step records, for the report's end-to-end and browser tests.
#include <cstdio>
#include <cstring>
#include <fstream>

#include "decide/diagnosis.h"
#include "report/report_testing.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: report_fixture OUT.json [--hostile] [--after] [--emulated] [--priced]\n");
    return 2;
  }
  stepscope::report::TestDiagnosisOptions options;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--hostile"))
      options.hostile = true;
    else if (!std::strcmp(argv[i], "--after"))
      options.after = true;
    else if (!std::strcmp(argv[i], "--emulated"))
      options.emulated = true;
    else if (!std::strcmp(argv[i], "--priced"))
      options.priced = true;
    else {
      std::fprintf(stderr, "report_fixture: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  auto d = stepscope::report::MakeTestDiagnosis(options);
  if (!d.ok()) {
    std::fprintf(stderr, "report_fixture: %s\n", d.status().message().c_str());
    return 1;
  }
  std::ofstream out(argv[1]);
  out << stepscope::decide::DiagnosisToString(d.value());
  out.close();
  if (!out) {
    std::fprintf(stderr, "report_fixture: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
