// ByteSource: a sequential stream of uncompressed bytes from a file or a memory buffer, with
// gzip detected by its magic bytes and inflated in chunks (concatenated members included).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace stepscope::trace {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `n` bytes into `out`; returns 0 at the end of the stream.
  virtual Result<size_t> Read(char* out, size_t n) = 0;
  virtual bool gzip() const { return false; }
};

// Opens `path`; a gzip file is decompressed on the fly, on a worker thread a few MiB ahead of
// the reader (so that inflating overlaps with parsing).
Result<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path);
// Wraps `data` (which must outlive the source); gzip data is decompressed on the fly.
std::unique_ptr<ByteSource> MemoryByteSource(std::string_view data, const std::string& name);

}  // namespace stepscope::trace
