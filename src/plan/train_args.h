// A workload's `stepscope train` arguments as given: a list of options, each a flag with its
// value or a bare flag. Kept as pairs (not a flat list of words) so that replacing an option
// never has to guess whether the word after a flag is its value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope::plan {

// One option: "--batch" "4", or a bare flag such as "--no-overlap".
struct TrainArg {
  std::string flag;
  std::optional<std::string> value;

  bool operator==(const TrainArg&) const = default;
};

using TrainArgs = std::vector<TrainArg>;

// The arguments as a command line gets them: "--batch", "4", "--no-overlap", ...
std::vector<std::string> Flatten(const TrainArgs& args);

// True when some option is `flag`.
bool Has(const TrainArgs& args, std::string_view flag);

// Removes every occurrence of `flag` (with its value).
void Remove(TrainArgs* args, std::string_view flag);

// Replaces every occurrence of `flag` with one `flag value` at the end (the last one wins when
// train parses them, so the end is where a change belongs).
void Replace(TrainArgs* args, std::string_view flag, std::optional<std::string> value);

// Appends `defaults` options the arguments do not already have.
void AddMissing(TrainArgs* args, const TrainArgs& defaults);

}  // namespace stepscope::plan
