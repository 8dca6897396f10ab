// Collective matching across ranks: the k-th collective of a process group in a step on one
// rank is the k-th on every other rank (or, when the trace carries sequence numbers, the one
// with the same number). With aligned clocks the arrival skew follows directly; without, the
// rank whose collective was shortest is taken as the last to arrive (the others waited for it).
#pragma once

#include <string>
#include <vector>

#include "trace/importer.h"

namespace stepscope::trace {

enum class MatchMethod {
  kAlignedArrival,    // clocks comparable: last arrival = latest start
  kShortestDuration,  // clocks not comparable: last arrival = shortest collective
};
const char* MatchMethodName(MatchMethod method);

struct MatchedCollective {
  int64_t step = 0;
  std::string group;
  int index = 0;  // position within (step, group), or the sequence number
  std::string name;
  std::vector<int> ranks;        // ranks that have this collective
  std::vector<double> arrival;   // per entry of `ranks`, seconds on that rank's clock
  std::vector<double> duration;  // per entry of `ranks`, seconds
  int last_rank = -1;            // the rank the others waited for
  double skew = 0;               // max - min arrival (aligned clocks only; 0 otherwise)
};

struct MatchResult {
  MatchMethod method = MatchMethod::kAlignedArrival;
  bool by_sequence = false;  // matched by sequence numbers rather than order
  std::vector<MatchedCollective> collectives;
  std::vector<int> ranks;             // ranks in the input, ascending
  std::vector<int> times_last;        // per entry of `ranks`: collectives where it arrived last
  std::vector<double> busy;           // per entry of `ranks`: mean compute per matched step (s)
  std::vector<std::string> warnings;  // mismatched counts, steps missing on some ranks, ...
};

// `traces` are one per rank (duplicate ranks are an error).
Result<MatchResult> MatchCollectives(const std::vector<ImportedTrace>& traces);
// Whether timestamps of these files can be compared directly.
bool ClocksComparable(const std::vector<ImportedTrace>& traces);

}  // namespace stepscope::trace
