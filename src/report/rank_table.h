// The ranks table both reports show at the largest replica count: per rank its compute and
// overhead, of the overhead the time in the job's own collectives once some rank recorded it (a
// PyTorch script's barrier: the rank that works alone there and the ranks that wait for it), its
// compute excess over the others and how often it arrived last.
#pragma once

#include <string>
#include <vector>

#include "decide/diagnosis.h"

namespace stepscope::report {

struct RankTable {
  std::vector<std::string> header;  // the last column is the straggler mark
  struct Row {
    std::vector<std::string> cells;  // milliseconds with 3 decimals, percentages
    bool straggler = false;
  };
  std::vector<Row> rows;  // in the skew report's rank order; empty without per-rank skew
};

RankTable RankTableOf(const decide::DiagnosisPoint& p);

}  // namespace stepscope::report
