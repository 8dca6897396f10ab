// Collective matching across ranks, per process group: by the group's sequence numbers where
// every collective of the group carries one (record_param_comms "seq"), else the k-th collective
// of the group in a step on one rank is the k-th on every other rank. Collectives of different
// groups are never paired, however their launches interleave. With aligned clocks the arrival skew
// follows directly; without, the rank whose collective was shortest is taken as the last to arrive
// (the others waited for it).
#pragma once

#include <string>
#include <vector>

#include "core/step_record.h"
#include "trace/importer.h"

namespace stepscope::trace {

enum class MatchMethod {
  kAlignedArrival,    // clocks comparable: last arrival = latest start
  kShortestDuration,  // clocks not comparable: last arrival = shortest collective
};
const char* MatchMethodName(MatchMethod method);

struct MatchedCollective {
  int64_t step = 0;  // the step on the lowest rank that has it
  std::string group;
  int index = 0;  // position within (step, group), or the sequence number
  bool by_sequence = false;
  std::string name;
  std::vector<int> ranks;        // ranks that have this collective
  std::vector<double> arrival;   // per entry of `ranks`, seconds on that rank's clock
  std::vector<double> duration;  // per entry of `ranks`, seconds
  std::vector<int64_t> steps;    // per entry of `ranks`: the step it falls in on that rank
  std::vector<int> positions;    // per entry of `ranks`: its position in that step's collectives
  int last_rank = -1;            // the rank the others waited for
  double skew = 0;               // max - min arrival (aligned clocks only; 0 otherwise)
};

struct MatchResult {
  MatchMethod method = MatchMethod::kAlignedArrival;
  bool by_sequence = false;  // every group matched by sequence numbers rather than order
  int groups_by_sequence = 0;
  int groups_by_order = 0;
  std::vector<MatchedCollective> collectives;
  std::vector<int> ranks;             // ranks in the input, ascending
  std::vector<int> times_last;        // per entry of `ranks`: collectives where it arrived last
  std::vector<double> busy;           // per entry of `ranks`: mean compute per matched step (s)
  std::vector<std::string> warnings;  // mismatched counts, steps missing on some ranks, ...
};

// `traces` are one per rank (duplicate ranks are an error).
Result<MatchResult> MatchCollectives(const std::vector<ImportedTrace>& traces);
// Gives each matched collective one index per step, the same on every rank, in the records built
// from the matched traces (ImportedTrace::ToStepRecords numbers them by position, which differs
// between ranks where groups interleave differently). Collectives matched on no other rank get
// indices from kUnmatchedIndex up, distinct per rank.
constexpr int kUnmatchedIndex = 1000000;
void NumberMatchedCollectives(const MatchResult& match, std::vector<StepRecord>* records);

// Whether timestamps of these files can be compared directly.
bool ClocksComparable(const std::vector<ImportedTrace>& traces);

}  // namespace stepscope::trace
