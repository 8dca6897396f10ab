#include "core/placeholders.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace stepscope::core {
namespace {

bool NameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// One pass over a word: literal text (escapes resolved) and placeholders, in order.
template <typename OnText, typename OnName>
void Scan(std::string_view word, OnText on_text, OnName on_name) {
  size_t i = 0;
  while (i < word.size()) {
    const char c = word[i];
    if ((c == '{' || c == '}') && i + 1 < word.size() && word[i + 1] == c) {
      on_text(std::string_view(&word[i], 1));
      i += 2;
      continue;
    }
    if (c == '$' && i + 1 < word.size() && word[i + 1] == '{') {  // ${VAR}: as written
      const size_t close = word.find('}', i);
      const size_t end = close == std::string_view::npos ? word.size() : close + 1;
      on_text(word.substr(i, end - i));
      i = end;
      continue;
    }
    if (c == '{' && i + 1 < word.size() && NameStart(word[i + 1])) {
      size_t j = i + 1;
      while (j < word.size() && NameChar(word[j])) ++j;
      if (j < word.size() && word[j] == '}') {
        on_name(word.substr(i + 1, j - i - 1), word.substr(i, j + 1 - i));
        i = j + 1;
        continue;
      }
    }
    on_text(word.substr(i, 1));
    ++i;
  }
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> PlaceholderNames(std::string_view word) {
  std::vector<std::string> names;
  Scan(
      word, [](std::string_view) {},
      [&](std::string_view name, std::string_view) { names.emplace_back(name); });
  return names;
}

std::string FillPlaceholders(std::string_view word,
                             const std::vector<std::pair<std::string_view, std::string>>& values) {
  std::string out;
  Scan(
      word, [&](std::string_view text) { out += text; },
      [&](std::string_view name, std::string_view written) {
        const auto it = std::find_if(values.begin(), values.end(),
                                     [&](const auto& v) { return v.first == name; });
        out += it == values.end() ? std::string(written) : it->second;
      });
  return out;
}

Status CheckPlaceholders(const std::vector<std::string>& words,
                         const std::vector<std::string_view>& known, std::string_view what) {
  for (const std::string& word : words) {
    for (const std::string& name : PlaceholderNames(word)) {
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      std::string list;
      std::string_view nearest;
      size_t best = 3;  // suggest only a name within two edits
      for (std::string_view k : known) {
        list += fmt::format("{}{{{}}}", list.empty() ? "" : ", ", k);
        if (const size_t d = EditDistance(name, k); d < best) best = d, nearest = k;
      }
      if (nearest.empty() && name.size() > 1) {  // "{batch_size}": a known name inside it
        for (std::string_view k : known) {
          if (k.size() > 1 && name.find(k) != std::string::npos) nearest = k;
        }
      }
      return Status::Error(fmt::format(
          "{}: '{{{}}}' in '{}' is not a placeholder stepscope fills{}; the placeholders are "
          "{}. To pass braces to the program as written, double them ('{{{{{}}}}}')",
          what, name, word,
          nearest.empty() ? std::string() : fmt::format(" (did you mean {{{}}}?)", nearest), list,
          name));
    }
  }
  return Status::Ok();
}

}  // namespace stepscope::core
