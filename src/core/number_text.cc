#include "core/number_text.h"

#include <charconv>
#include <cmath>

namespace stepscope {
namespace {

Status NotA(std::string_view what, std::string_view text, const NumberContext& c) {
  const std::string prefix = c.name.empty() ? "" : c.name + ": ";
  return Status::Error(prefix + "'" + std::string(text) + "' is not " + std::string(what) +
                       "; write e.g. " + c.example);
}

}  // namespace

Result<double> ParseDouble(std::string_view text, const NumberContext& context) {
  double value = 0;
  const char* end = text.data() + text.size();
  // from_chars refuses a leading '+' and leading spaces, and reports where it stopped.
  auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return NotA("a number", text, context);
  }
  return value;
}

Result<int64_t> ParseInteger(std::string_view text, const NumberContext& context) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, 10);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return NotA("a whole number", text, context);
  }
  return value;
}

std::vector<std::string_view> SplitText(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  if (text.empty()) return parts;
  size_t start = 0;
  while (true) {
    const size_t pos = text.find(separator, start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

}  // namespace stepscope
