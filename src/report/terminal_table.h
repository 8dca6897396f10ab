// Aligned text tables for the terminal, with optional ANSI colour (callers decide: only when
// stdout is a terminal). Widths count UTF-8 code points, so "≈" or "→" do not break alignment.
#pragma once

#include <string>
#include <vector>

namespace stepscope::report {

enum class Align { kLeft, kRight };

// ANSI styles; Paint returns `text` unchanged when colour is off.
enum class Style { kPlain, kBold, kRed, kGreen, kYellow, kDim };
std::string Paint(const std::string& text, Style style, bool colour);

class TextTable {
 public:
  // One entry per column.
  TextTable(std::vector<std::string> header, std::vector<Align> align);

  // Cells beyond the header's width are dropped; missing ones are blank. `style` colours the
  // whole row (when rendering with colour).
  void AddRow(std::vector<std::string> cells, Style style = Style::kPlain);

  // Columns separated by two spaces, each line indented by `indent` spaces; the header is bold
  // when `colour`.
  std::string Render(bool colour, int indent = 2) const;

 private:
  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<Style> styles_;
};

// Display width of a UTF-8 string (code points; no wide-character handling).
size_t DisplayWidth(const std::string& text);

}  // namespace stepscope::report
