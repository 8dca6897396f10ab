// Numeric command-line options read strictly: a CLI11 check that the option's whole text is one
// number (core/number_text.h), refusing e.g. "--batch 32abc" with the option's name and an
// example, before CLI11 converts the text.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace stepscope::app {

// `example` is a correct use, e.g. "--batch 32".
CLI::Validator WholeNumber(const std::string& example);
CLI::Validator Number(const std::string& example);

}  // namespace stepscope::app
