// Reader for gzip'd IDX files (the MNIST / Fashion-MNIST container): a big-endian header
// (magic number, then one 32-bit size per dimension) followed by the raw unsigned bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace stepscope::data {

inline constexpr uint32_t kIdxImagesMagic = 2051;  // 0x00000803: unsigned bytes, 3 dimensions
inline constexpr uint32_t kIdxLabelsMagic = 2049;  // 0x00000801: unsigned bytes, 1 dimension

struct IdxArray {
  std::vector<uint32_t> dims;  // e.g. {60000, 28, 28} for images, {60000} for labels
  std::vector<uint8_t> data;   // product(dims) bytes, row-major
};

// Reads `path` (gzip'd or plain; zlib reads both) and checks that its magic number is
// `expected_magic` (which also fixes the number of dimensions) and that the file holds all
// the bytes the header announces. Errors name the file, the field and what to do.
Result<IdxArray> ReadIdxFile(const std::string& path, uint32_t expected_magic);

}  // namespace stepscope::data
