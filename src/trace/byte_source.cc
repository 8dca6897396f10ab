#include "trace/byte_source.h"

#include <zlib.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace stepscope::trace {
namespace {

constexpr size_t kChunk = 1 << 20;

// Raw bytes, possibly with a few bytes already peeked.
class RawSource {
 public:
  virtual ~RawSource() = default;
  virtual Result<size_t> Read(char* out, size_t n) = 0;
};

class FileRaw : public RawSource {
 public:
  FileRaw(std::FILE* f, std::string path) : f_(f), path_(std::move(path)) {}
  ~FileRaw() override { std::fclose(f_); }
  Result<size_t> Read(char* out, size_t n) override {
    size_t got = std::fread(out, 1, n, f_);
    if (got < n && std::ferror(f_)) {
      return Status::Error(path_ + ": read error (" + std::strerror(errno) + ")");
    }
    return got;
  }

 private:
  std::FILE* f_;
  std::string path_;
};

class MemoryRaw : public RawSource {
 public:
  explicit MemoryRaw(std::string_view data) : data_(data) {}
  Result<size_t> Read(char* out, size_t n) override {
    size_t take = std::min(n, data_.size() - pos_);
    std::memcpy(out, data_.data() + pos_, take);
    pos_ += take;
    return take;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Passes bytes through, after handing back the peeked prefix.
class PlainSource : public ByteSource {
 public:
  PlainSource(std::unique_ptr<RawSource> raw, std::string prefix)
      : raw_(std::move(raw)), prefix_(std::move(prefix)) {}
  Result<size_t> Read(char* out, size_t n) override {
    if (prefix_pos_ < prefix_.size()) {
      size_t take = std::min(n, prefix_.size() - prefix_pos_);
      std::memcpy(out, prefix_.data() + prefix_pos_, take);
      prefix_pos_ += take;
      return take;
    }
    return raw_->Read(out, n);
  }

 private:
  std::unique_ptr<RawSource> raw_;
  std::string prefix_;
  size_t prefix_pos_ = 0;
};

class GzipSource : public ByteSource {
 public:
  GzipSource(std::unique_ptr<RawSource> raw, std::string prefix, std::string name)
      : raw_(std::move(raw)), in_(kChunk), name_(std::move(name)) {
    std::memset(&zs_, 0, sizeof(zs_));
    ok_ = inflateInit2(&zs_, 16 + MAX_WBITS) == Z_OK;
    std::memcpy(in_.data(), prefix.data(), prefix.size());
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(prefix.size());
  }
  ~GzipSource() override { inflateEnd(&zs_); }
  bool gzip() const override { return true; }

  Result<size_t> Read(char* out, size_t n) override {
    if (!ok_) return Status::Error(name_ + ": zlib initialisation failed");
    if (done_) return size_t{0};
    zs_.next_out = reinterpret_cast<Bytef*>(out);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0 && !eof_) {
        auto got = raw_->Read(in_.data(), in_.size());
        if (!got.ok()) return got.status();
        if (*got == 0) {
          eof_ = true;
        } else {
          compressed_ += *got;
          zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
          zs_.avail_in = static_cast<uInt>(*got);
        }
      }
      if (zs_.avail_in == 0 && eof_) {
        if (!member_ended_) {
          return Status::Error(name_ + ": gzip stream truncated after " +
                               std::to_string(zs_.total_out + produced_before_) +
                               " uncompressed bytes (the file may be incomplete)");
        }
        done_ = true;
        break;
      }
      if (member_ended_) {  // another gzip member follows
        produced_before_ += zs_.total_out;
        inflateReset(&zs_);
        member_ended_ = false;
      }
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Status::Error(name_ + ": corrupt gzip data after " +
                             std::to_string(zs_.total_out + produced_before_) +
                             " uncompressed bytes (" + (zs_.msg ? zs_.msg : "zlib error") + ")");
      } else if (rc == Z_BUF_ERROR && zs_.avail_in == 0 && eof_) {
        continue;  // handled at the top of the loop
      }
    }
    return n - zs_.avail_out;
  }

 private:
  std::unique_ptr<RawSource> raw_;
  std::vector<char> in_;
  std::string name_;
  z_stream zs_;
  bool ok_ = false;
  bool eof_ = false;
  bool done_ = false;
  bool member_ended_ = false;
  uint64_t compressed_ = 0;
  uint64_t produced_before_ = 0;
};

// Runs another source on a worker thread a few chunks ahead of the reader, so that inflating a
// gzip file overlaps with parsing it: gzip input then goes at the pace of the slower of the two
// instead of their sum. Memory: kPrefetchChunks chunks of kChunk bytes.
class PrefetchSource : public ByteSource {
 public:
  explicit PrefetchSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)) {
    worker_ = std::thread([this] { Produce(); });
  }
  ~PrefetchSource() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  bool gzip() const override { return inner_->gzip(); }

  Result<size_t> Read(char* out, size_t n) override {
    size_t total = 0;
    while (total < n) {
      if (cur_ == nullptr || cur_pos_ == cur_->size) {
        if (cur_ != nullptr && cur_->last) break;  // end of stream, or an error (below)
        std::unique_lock<std::mutex> lock(mu_);
        if (cur_ != nullptr) free_.push_back(std::move(cur_));
        cv_.notify_all();
        cv_.wait(lock, [&] { return !ready_.empty(); });
        cur_ = std::move(ready_.front());
        ready_.pop_front();
        cur_pos_ = 0;
        continue;
      }
      const size_t take = std::min(n - total, cur_->size - cur_pos_);
      std::memcpy(out + total, cur_->data.data() + cur_pos_, take);
      cur_pos_ += take;
      total += take;
    }
    // The inner source's error comes after the bytes that preceded it.
    if (total == 0 && cur_ != nullptr && cur_->last && !cur_->status.ok()) return cur_->status;
    return total;
  }

 private:
  static constexpr size_t kPrefetchChunks = 4;
  struct Chunk {
    std::vector<char> data = std::vector<char>(kChunk);
    size_t size = 0;
    bool last = false;  // the inner source ended (or failed) after this chunk's bytes
    Status status;
  };

  void Produce() {
    size_t allocated = 0;
    while (true) {
      std::unique_ptr<Chunk> c;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !free_.empty() || allocated < kPrefetchChunks; });
        if (stop_) return;
        if (!free_.empty()) {
          c = std::move(free_.back());
          free_.pop_back();
        } else {
          c = std::make_unique<Chunk>();
          ++allocated;
        }
      }
      c->size = 0;
      c->last = false;
      c->status = Status::Ok();
      // Fill the chunk (the inner source may return less than asked before its end).
      while (c->size < c->data.size()) {
        auto got = inner_->Read(c->data.data() + c->size, c->data.size() - c->size);
        if (!got.ok()) {
          c->status = got.status();
          c->last = true;
          break;
        }
        if (*got == 0) {
          c->last = true;
          break;
        }
        c->size += *got;
      }
      const bool last = c->last;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ready_.push_back(std::move(c));
      }
      cv_.notify_all();
      if (last) return;
    }
  }

  std::unique_ptr<ByteSource> inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Chunk>> ready_;  // filled, in stream order
  std::vector<std::unique_ptr<Chunk>> free_;  // consumed, to refill
  bool stop_ = false;
  std::unique_ptr<Chunk> cur_;  // the chunk being read (reader thread only)
  size_t cur_pos_ = 0;
  std::thread worker_;  // last: started once everything above exists
};

Result<std::unique_ptr<ByteSource>> Wrap(std::unique_ptr<RawSource> raw, const std::string& name) {
  char magic[2];
  size_t have = 0;
  while (have < 2) {
    auto got = raw->Read(magic + have, 2 - have);
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    have += *got;
  }
  std::string prefix(magic, have);
  if (have == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
      static_cast<unsigned char>(magic[1]) == 0x8b) {
    return std::unique_ptr<ByteSource>(new GzipSource(std::move(raw), prefix, name));
  }
  return std::unique_ptr<ByteSource>(new PlainSource(std::move(raw), prefix));
}

}  // namespace

Result<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return Status::Error(path + ": cannot open (" + std::strerror(errno) + ")");
  }
  auto src = Wrap(std::make_unique<FileRaw>(f, path), path);
  if (!src.ok() || !(*src)->gzip()) return src;
  return std::unique_ptr<ByteSource>(new PrefetchSource(std::move(src).value()));
}

std::unique_ptr<ByteSource> MemoryByteSource(std::string_view data, const std::string& name) {
  auto src = Wrap(std::make_unique<MemoryRaw>(data), name);
  return std::move(src).value();  // memory reads cannot fail
}

}  // namespace stepscope::trace
