#include "data/idx_file.h"

#include <zlib.h>

#include <limits>
#include <memory>

namespace stepscope::data {
namespace {

constexpr char kFix[] = "re-download the file or reinstall the dataset-fashion-mnist package";

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads exactly `n` bytes; returns how many were read (short on truncation), or -1 on error.
int64_t ReadFully(gzFile f, uint8_t* dst, int64_t n) {
  int64_t done = 0;
  while (done < n) {
    const int64_t chunk = std::min<int64_t>(n - done, 1 << 30);
    const int got = gzread(f, dst + done, static_cast<unsigned>(chunk));
    if (got < 0) return -1;
    if (got == 0) break;
    done += got;
  }
  return done;
}

Status ReadBigEndian32(gzFile f, const std::string& path, const std::string& field, uint32_t* out) {
  uint8_t b[4];
  const int64_t got = ReadFully(f, b, 4);
  if (got < 0) {
    int errnum = 0;
    return Status::Error(path + ": field '" + field + "': read error (" + gzerror(f, &errnum) +
                         "); " + kFix);
  }
  if (got != 4) {
    return Status::Error(path + ": field '" + field + "': file ends inside the header (got " +
                         std::to_string(got) + " of 4 bytes); the file is truncated, " + kFix);
  }
  *out = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  return Status::Ok();
}

}  // namespace

Result<IdxArray> ReadIdxFile(const std::string& path, uint32_t expected_magic) {
  GzFile f(gzopen(path.c_str(), "rb"));
  if (!f) {
    return Status::Error(path + ": cannot open (does it exist and is it readable?); install " +
                         "dataset-fashion-mnist or pass the directory that holds the IDX files");
  }
  uint32_t magic = 0;
  STEPSCOPE_RETURN_IF_ERROR(ReadBigEndian32(f.get(), path, "magic", &magic));
  if (magic != expected_magic) {
    return Status::Error(
        path + ": field 'magic' is " + std::to_string(magic) + ", expected " +
        std::to_string(expected_magic) + " (" +
        (expected_magic == kIdxImagesMagic ? "an IDX image file" : "an IDX label file") +
        "); is this the right file? " + kFix);
  }
  const int ndims = static_cast<int>(magic & 0xff);
  IdxArray out;
  out.dims.resize(ndims);
  uint64_t total = 1;
  for (int d = 0; d < ndims; ++d) {
    const std::string field = d == 0 ? "count" : "dim" + std::to_string(d);
    STEPSCOPE_RETURN_IF_ERROR(ReadBigEndian32(f.get(), path, field, &out.dims[d]));
    if (out.dims[d] == 0) {
      return Status::Error(path + ": field '" + field + "' is 0, expected a positive size; " +
                           kFix);
    }
    total *= out.dims[d];
    if (total > (uint64_t{1} << 40)) {
      return Status::Error(path + ": field '" + field + "' makes the array larger than 1 TiB (" +
                           std::to_string(total) + " bytes); the header is corrupt, " + kFix);
    }
  }
  out.data.resize(total);
  const int64_t got = ReadFully(f.get(), out.data.data(), static_cast<int64_t>(total));
  if (got < 0) {
    int errnum = 0;
    return Status::Error(path + ": field 'data': read error (" + gzerror(f.get(), &errnum) + "); " +
                         kFix);
  }
  if (static_cast<uint64_t>(got) != total) {
    return Status::Error(path + ": field 'data' is truncated: the header announces " +
                         std::to_string(total) + " bytes, the file holds " + std::to_string(got) +
                         "; " + kFix);
  }
  return out;
}

}  // namespace stepscope::data
