// Numbers read from text strictly: the whole text must be one number, nothing before or after
// it ("0.05abc", "1.7x", " 3" and "" are refused). Used for every numeric option and every number
// inside a list or spec ("1:1.6,3:1.4", "0.012,50"), so that a typo is an error, not a silent
// truncation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace stepscope {

// What the number is for, in an error message: `name` (e.g. "option --emulate-link"; empty when
// the caller prefixes it) and an example of a correct value (e.g. "--emulate-link 0.012,50").
struct NumberContext {
  std::string name;
  std::string example;
};

// A finite decimal number ("0.05", "1e-3", "-2"); refuses inf and nan.
Result<double> ParseDouble(std::string_view text, const NumberContext& context);
// A whole number ("12", "-1"); refuses "1.5", "1e3" and values out of range.
Result<int64_t> ParseInteger(std::string_view text, const NumberContext& context);

// Splits `text` at every `separator` (an empty text gives no parts; an empty part is kept, so
// that "1,,2" is refused by the number parser rather than silently skipped).
std::vector<std::string_view> SplitText(std::string_view text, char separator);

}  // namespace stepscope
