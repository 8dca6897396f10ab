// Numeric command-line options read strictly: a CLI11 check that the option's whole text is one
// number (core/number_text.h), refusing e.g. "--batch 32abc" with the option's name and an
// example, before CLI11 converts the text.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "core/number_text.h"
#include "core/status.h"

namespace stepscope::app {

// `example` is a correct use, e.g. "--batch 32". A whole number must lie in [lo, hi] (the
// range of the option's type, or tighter) and is handed on in canonical decimal, so that CLI11's
// own conversion never reads "010" as octal.
CLI::Validator WholeNumber(const std::string& example, int64_t lo = INT32_MIN,
                           int64_t hi = INT32_MAX);
CLI::Validator Number(const std::string& example);

// "A<sep>B" -> (A, B), each part one decimal number read whole; B is optional (left as it is)
// unless `b_required`. Errors name `context`.
Status ParsePair(const std::string& text, char sep, const NumberContext& context, double* a,
                 double* b, bool b_required);

}  // namespace stepscope::app
