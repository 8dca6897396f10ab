// Byte-level text: every byte is a token in 0..255. Example i of a split is the window of
// context + 1 bytes starting at i * context; its tokens are the first `context` bytes and its
// targets the same window shifted by one (targets[t] = tokens[t + 1], the next byte).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/source.h"

namespace stepscope::data {

class TextDataset : public Dataset {
 public:
  // Shares `bytes` between splits; the split covers bytes [begin, end).
  TextDataset(std::string description, std::shared_ptr<const std::string> bytes, int64_t begin,
              int64_t end, int context);

  // floor((end - begin - 1) / context) windows.
  int64_t size() const override { return size_; }
  std::string Describe() const override { return description_; }
  // tokens (B, T) and targets (B, T) with T = context; inputs empty. `augment` is ignored.
  void Fill(const std::vector<int64_t>& indices, bool augment, uint64_t rng_seed,
            Batch* out) const override;
  int context() const { return context_; }

 private:
  std::string description_;
  std::shared_ptr<const std::string> bytes_;
  int64_t begin_;
  int context_;
  int64_t size_;
};

// The fortune-file format: entries separated by lines holding only '%'. Returns the entries'
// text (each keeping its own line breaks) joined with '\n'; separator lines and empty entries
// are dropped.
std::string StripFortuneSeparators(const std::string& text);

// Reads a corpus. A regular file is read verbatim. A directory is read as a fortunes corpus:
// its regular files in name order, skipping *.dat and *.u8 (the index files and UTF-8 links
// of the fortune package), each passed through StripFortuneSeparators, then joined with '\n'.
// Subdirectories (such as the package's "off") are read only when the directory holds no
// usable file itself.
Result<std::string> ReadTextCorpus(const std::string& path);

}  // namespace stepscope::data
