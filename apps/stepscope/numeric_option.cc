#include "apps/stepscope/numeric_option.h"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "core/number_text.h"

namespace stepscope::app {

// CLI11 puts the option's name before the message.
CLI::Validator WholeNumber(const std::string& example, int64_t lo, int64_t hi) {
  return CLI::Validator(
      [example, lo, hi](std::string& text) -> std::string {
        auto r = ParseInteger(text, NumberContext{"", example});
        if (!r.ok()) return r.status().message();
        if (*r < lo || *r > hi) {
          return fmt::format("{} is out of range ({} to {}); write e.g. {}", text, lo, hi, example);
        }
        text = std::to_string(*r);
        return "";
      },
      "");
}

CLI::Validator Number(const std::string& example) {
  return CLI::Validator(
      [example](std::string& text) -> std::string {
        auto r = ParseDouble(text, NumberContext{"", example});
        return r.ok() ? "" : r.status().message();
      },
      "");
}

Status ParsePair(const std::string& text, char sep, const NumberContext& context, double* a,
                 double* b, bool b_required) {
  const std::vector<std::string_view> parts = SplitText(text, sep);
  if (parts.empty() || parts.size() > 2 || (b_required && parts.size() < 2)) {
    return Status::Error(context.name + ": cannot read '" + text + "'; write e.g. " +
                         context.example);
  }
  Result<double> first = ParseDouble(parts[0], context);
  if (!first.ok()) return first.status();
  *a = *first;
  if (parts.size() == 2) {
    Result<double> second = ParseDouble(parts[1], context);
    if (!second.ok()) return second.status();
    *b = *second;
  }
  return Status::Ok();
}

}  // namespace stepscope::app
