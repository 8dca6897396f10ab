#include "apps/stepscope/numeric_option.h"

#include "core/number_text.h"

namespace stepscope::app {

// CLI11 puts the option's name before the message.
CLI::Validator WholeNumber(const std::string& example) {
  return CLI::Validator(
      [example](std::string& text) -> std::string {
        auto r = ParseInteger(text, NumberContext{"", example});
        return r.ok() ? "" : r.status().message();
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
