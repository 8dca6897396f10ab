// Escaping for text that goes into an HTML page: element text and attribute values, and JSON
// placed inside a <script> element (so no "</script>" or "<!--" can end or confuse it).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace stepscope::report {

// Replaces & < > " ' with character references: safe in element text and quoted attributes.
// Control characters other than tab, CR and LF (and DEL) become U+FFFD.
std::string EscapeHtml(std::string_view text);

// Compact JSON with every '<', '>', '&' and DEL written as \u003c, \u003e, \u0026, \u007f and
// the line separators U+2028/U+2029 as \u2028/\u2029: safe inside <script
// type="application/json"> and as a JavaScript expression. Invalid UTF-8 in strings becomes
// U+FFFD.
std::string JsonForScript(const nlohmann::json& value);

}  // namespace stepscope::report
