#include "sweep/launcher.h"

#include <algorithm>

#include "core/placeholders.h"

namespace stepscope::sweep {

std::vector<std::string> LauncherEnvironment() {
  return {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
}

Result<std::vector<std::string>> SplitWords(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      const size_t close = text.find('\'', i + 1);
      if (close == std::string::npos) {
        return Status::Error("launcher template: unterminated ' starting at character " +
                             std::to_string(i + 1));
      }
      word += text.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size()) ++j;
        word += text[j];
      }
      if (j >= text.size()) {
        return Status::Error("launcher template: unterminated \" starting at character " +
                             std::to_string(i + 1));
      }
      in_word = true;
      i = j;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

Result<Launcher> Launcher::Parse(const std::string& text) {
  Result<std::vector<std::string>> words = SplitWords(text);
  if (!words.ok()) return words.status();
  if (words->empty()) {
    return Status::Error(
        "launcher template is empty; write e.g. 'mpirun -np {n}' or 'srun -n {n}'");
  }
  const Status placeholders =
      core::CheckPlaceholders(*words, {"n", "nnodes", "nproc_per_node"}, "launcher template");
  if (!placeholders.ok()) return placeholders;
  Launcher l;
  l.words = std::move(words).value();
  return l;
}

std::vector<std::string> Launcher::Argv(int replicas, const std::string& program,
                                        const std::vector<std::string>& args) const {
  const int procs = per_node > 0 ? std::min(per_node, replicas) : replicas;
  const int nodes = (replicas + procs - 1) / procs;
  const std::vector<std::pair<std::string_view, std::string>> values = {
      {"n", std::to_string(replicas)},
      {"nproc_per_node", std::to_string(procs)},
      {"nnodes", std::to_string(nodes)}};
  std::vector<std::string> argv;
  for (const std::string& w : words) argv.push_back(core::FillPlaceholders(w, values));
  argv.push_back(program);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string QuoteCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& w : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !w.empty();
    for (char c : w) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) ||
            std::string("-_./=:,{}+@%").find(c) != std::string::npos)) {
        plain = false;
      }
    }
    if (plain) {
      out += w;
    } else {
      out += '\'';
      for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

}  // namespace stepscope::sweep
