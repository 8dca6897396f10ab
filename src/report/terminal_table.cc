#include "report/terminal_table.h"

#include <algorithm>

namespace stepscope::report {

std::string Paint(const std::string& text, Style style, bool colour) {
  if (!colour || style == Style::kPlain) return text;
  const char* code = "";
  switch (style) {
    case Style::kBold:
      code = "1";
      break;
    case Style::kRed:
      code = "31";
      break;
    case Style::kGreen:
      code = "32";
      break;
    case Style::kYellow:
      code = "33";
      break;
    case Style::kDim:
      code = "2";
      break;
    case Style::kPlain:
      break;
  }
  return "\x1b[" + std::string(code) + "m" + text + "\x1b[0m";
}

size_t DisplayWidth(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;  // count lead bytes only
  return n;
}

TextTable::TextTable(std::vector<std::string> header, std::vector<Align> align)
    : header_(std::move(header)), align_(std::move(align)) {
  align_.resize(header_.size(), Align::kLeft);
}

void TextTable::AddRow(std::vector<std::string> cells, Style style) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
  styles_.push_back(style);
}

std::string TextTable::Render(bool colour, int indent) const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t c = 0; c < header_.size(); ++c) {
    width[c] = DisplayWidth(header_[c]);
    for (const auto& row : rows_) width[c] = std::max(width[c], DisplayWidth(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out(indent, ' ');
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - DisplayWidth(cells[c]), ' ');
      const bool last = c + 1 == cells.size();
      if (align_[c] == Align::kRight) {
        out += pad + cells[c];
      } else {
        out += cells[c];
        if (!last) out += pad;
      }
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
  std::string out = Paint(line(header_), Style::kBold, colour) + "\n";
  for (size_t r = 0; r < rows_.size(); ++r) out += Paint(line(rows_[r]), styles_[r], colour) + "\n";
  return out;
}

}  // namespace stepscope::report
