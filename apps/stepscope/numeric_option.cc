#include "apps/stepscope/numeric_option.h"

#include <fmt/format.h>

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

}  // namespace stepscope::app
