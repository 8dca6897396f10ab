#include "data/text_corpus.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace stepscope::data {
namespace fs = std::filesystem;

TextDataset::TextDataset(std::string description, std::shared_ptr<const std::string> bytes,
                         int64_t begin, int64_t end, int context)
    : description_(std::move(description)),
      bytes_(std::move(bytes)),
      begin_(begin),
      context_(context),
      size_(end - begin > context ? (end - begin - 1) / context : 0) {}

void TextDataset::Fill(const std::vector<int64_t>& indices, bool augment, uint64_t rng_seed,
                       Batch* out) const {
  const int batch = static_cast<int>(indices.size());
  const size_t T = static_cast<size_t>(context_);
  out->size = batch;
  out->inputs.clear();
  out->tokens.resize(batch * T);
  out->targets.resize(batch * T);
  const auto* text = reinterpret_cast<const unsigned char*>(bytes_->data());
  for (int b = 0; b < batch; ++b) {
    const unsigned char* window = text + begin_ + indices[b] * context_;  // context + 1 bytes
    int32_t* tok = out->tokens.data() + b * T;
    int32_t* tgt = out->targets.data() + b * T;
    for (size_t t = 0; t < T; ++t) {
      tok[t] = window[t];
      tgt[t] = window[t + 1];
    }
  }
}

std::string StripFortuneSeparators(const std::string& text) {
  std::string out;
  std::string entry;
  auto flush = [&] {
    if (entry.empty()) return;
    if (!out.empty()) out += '\n';
    out += entry;
    entry.clear();
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    const size_t next = eol == std::string::npos ? text.size() : eol + 1;
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line == "%") {
      flush();
    } else {
      entry.append(text, pos, next - pos);
    }
    pos = next;
  }
  flush();
  return out;
}

namespace {

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": cannot open for reading (does it exist?)");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": read error");
  return ss.str();
}

bool IsCorpusFile(const fs::directory_entry& e) {
  std::error_code ec;
  if (!e.is_regular_file(ec)) return false;
  const std::string ext = e.path().extension().string();
  return ext != ".dat" && ext != ".u8";
}

Status AppendDirectory(const fs::path& dir, std::string* out) {
  std::vector<fs::path> files;
  std::vector<fs::path> subdirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (IsCorpusFile(e)) {
      files.push_back(e.path());
    } else if (e.is_directory(ec)) {
      subdirs.push_back(e.path());
    }
  }
  if (ec) return Status::Error(dir.string() + ": cannot list directory (" + ec.message() + ")");
  std::sort(files.begin(), files.end());
  std::sort(subdirs.begin(), subdirs.end());
  if (files.empty()) {
    for (const auto& sub : subdirs) STEPSCOPE_RETURN_IF_ERROR(AppendDirectory(sub, out));
    return Status::Ok();
  }
  for (const auto& f : files) {
    auto text = ReadWholeFile(f.string());
    if (!text.ok()) return text.status();
    std::string entries = StripFortuneSeparators(*text);
    if (entries.empty()) continue;
    if (!out->empty()) *out += '\n';
    *out += entries;
  }
  return Status::Ok();
}

// The smallest corpus with at least `window` bytes on each side of the split.
int64_t MinimumBytes(int64_t window, double heldout_fraction) {
  if (heldout_fraction <= 0) return window;
  auto fits = [&](int64_t n) {
    const auto held = static_cast<int64_t>(std::floor(static_cast<double>(n) * heldout_fraction));
    return held >= window && n - held >= window;
  };
  const double a = static_cast<double>(window) / heldout_fraction;
  const double b = static_cast<double>(window) / (1.0 - heldout_fraction);
  auto n = static_cast<int64_t>(std::ceil(std::max(a, b))) - 2;
  n = std::max<int64_t>(n, 2 * window);
  while (!fits(n)) ++n;
  return n;
}

}  // namespace

Result<std::string> ReadTextCorpus(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    return Status::Error(path + ": no such file or directory; pass a text file or a directory " +
                         "of text files (e.g. /usr/share/games/fortunes from the fortunes " +
                         "package)");
  }
  if (fs::is_directory(st)) {
    std::string out;
    STEPSCOPE_RETURN_IF_ERROR(AppendDirectory(path, &out));
    return out;
  }
  return ReadWholeFile(path);
}

Result<Split> LoadText(const std::string& path, int context, double heldout_fraction) {
  if (context <= 0) {
    return Status::Error("--context " + std::to_string(context) + ": must be positive");
  }
  if (!(heldout_fraction >= 0 && heldout_fraction < 1)) {
    return Status::Error("heldout fraction " + std::to_string(heldout_fraction) +
                         ": must be in [0, 1)");
  }
  auto text = ReadTextCorpus(path);
  if (!text.ok()) return text.status();
  const auto n = static_cast<int64_t>(text->size());
  const int64_t window = static_cast<int64_t>(context) + 1;
  const auto held = static_cast<int64_t>(std::floor(static_cast<double>(n) * heldout_fraction));
  const int64_t train_end = n - held;
  if (train_end < window || (heldout_fraction > 0 && held < window)) {
    const int64_t minimum = MinimumBytes(window, heldout_fraction);
    return Status::Error(
        path + ": " + (n == 0 ? std::string("empty") : "too short") + " (" + std::to_string(n) +
        " bytes of text); a context of " + std::to_string(context) + " with held-out fraction " +
        std::to_string(heldout_fraction) + " needs at least " + std::to_string(minimum) +
        " bytes: use a longer text or a smaller --context");
  }
  auto bytes = std::make_shared<const std::string>(std::move(text.value()));
  auto describe = [&](const char* split, int64_t b, int64_t e) {
    return std::string("text ") + split + ": " + std::to_string(e - b) + " bytes (" +
           std::to_string(e > b ? (e - b - 1) / context : 0) + " windows of " +
           std::to_string(context) + "+1) from " + path;
  };
  Split split;
  split.train =
      std::make_unique<TextDataset>(describe("train", 0, train_end), bytes, 0, train_end, context);
  split.test =
      std::make_unique<TextDataset>(describe("test", train_end, n), bytes, train_end, n, context);
  return split;
}

}  // namespace stepscope::data
