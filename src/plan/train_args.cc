#include "plan/train_args.h"

#include <algorithm>

namespace stepscope::plan {

std::vector<std::string> Flatten(const TrainArgs& args) {
  std::vector<std::string> words;
  for (const TrainArg& arg : args) {
    words.push_back(arg.flag);
    if (arg.value) words.push_back(*arg.value);
  }
  return words;
}

bool Has(const TrainArgs& args, std::string_view flag) {
  return std::any_of(args.begin(), args.end(),
                     [flag](const TrainArg& arg) { return arg.flag == flag; });
}

void Remove(TrainArgs* args, std::string_view flag) {
  std::erase_if(*args, [flag](const TrainArg& arg) { return arg.flag == flag; });
}

void Replace(TrainArgs* args, std::string_view flag, std::optional<std::string> value) {
  Remove(args, flag);
  args->push_back({std::string(flag), std::move(value)});
}

void AddMissing(TrainArgs* args, const TrainArgs& defaults) {
  for (const TrainArg& arg : defaults) {
    if (!Has(*args, arg.flag)) args->push_back(arg);
  }
}

}  // namespace stepscope::plan
