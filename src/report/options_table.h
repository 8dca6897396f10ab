// The priced options as a table (one row per option, the chosen one marked), for the terminal
// summary and the HTML report alike.
#pragma once

#include <string>
#include <vector>

#include "decide/verdict.h"

namespace stepscope::report {

struct OptionsTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string caption;  // what the time and cost columns count, and the noise scale used
};

// Empty rows when the verdict priced no options.
OptionsTable PricedOptionsTable(const decide::Verdict& v);

}  // namespace stepscope::report
