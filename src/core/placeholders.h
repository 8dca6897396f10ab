// Words with placeholders: `{name}` is filled from a table, `{{` and `}}` are a literal `{` and
// `}`, and `${...}` (a shell's variable) is left as written. Used by the launcher template
// (`{n}`) and by a PyTorch command (`{batch}`), so that both read a word the same way and a
// misspelt placeholder is refused before anything runs instead of reaching a program as text.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace stepscope::core {

// The names of the placeholders in `word`, in order ("{batch}" gives "batch"). A name starts
// with a letter or '_' and holds letters, digits, '_' and '-' (so a misspelt "{bucket-mb}" is
// seen as a name); braces around anything else (JSON, "{}") are not a placeholder.
std::vector<std::string> PlaceholderNames(std::string_view word);

// `word` with each placeholder named in `values` replaced and `{{`/`}}` made single; a
// placeholder not in `values` stays as written.
std::string FillPlaceholders(std::string_view word,
                             const std::vector<std::pair<std::string_view, std::string>>& values);

// An error when a word holds a placeholder not in `known`: it names the placeholder, the word
// and `what` the words are ("option --torch"), lists the known ones, suggests the nearest, and
// says how to pass braces through.
Status CheckPlaceholders(const std::vector<std::string>& words,
                         const std::vector<std::string_view>& known, std::string_view what);

}  // namespace stepscope::core
