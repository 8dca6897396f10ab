#include "trace/reader.h"

#include <simdjson.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "trace/byte_source.h"

namespace stepscope::trace {
namespace {

namespace dom = simdjson::dom;

// Whether `key` is the literal `lit` (the length is a constant, so the compare is inlined).
template <size_t N>
bool Eq(std::string_view key, const char (&lit)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), lit, N - 1) == 0;
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Position of the closing quote of a string whose body starts at `p`, or `end` if not in range.
const char* FindStringEnd(const char* p, const char* end) {
  while (p < end) {
    const char* q = static_cast<const char*>(std::memchr(p, '"', end - p));
    if (q == nullptr) return end;
    const char* b = q;
    while (b > p && b[-1] == '\\') --b;
    if (((q - b) & 1) == 0) return q;  // even run of backslashes: a real quote
    p = q + 1;
  }
  return end;
}

// The input window: raw bytes (never zero-filled) with one byte of headroom before data() and
// simdjson's padding after the capacity, so that a run of whole events can be parsed in place
// by writing '[' just before it and ']' just after it.
class Window {
 public:
  char* data() { return mem_.get() + 1; }
  const char* data() const { return mem_.get() + 1; }
  size_t size() const { return size_; }
  size_t capacity() const { return cap_; }
  char operator[](size_t i) const { return data()[i]; }
  void set_size(size_t n) { size_ = n; }
  // Drops the first `n` bytes.
  void Drop(size_t n) {
    std::memmove(data(), data() + n, size_ - n);
    size_ -= n;
  }
  // Makes room for `n` bytes in all.
  void Reserve(size_t n) {
    if (n <= cap_) return;
    std::unique_ptr<char[]> mem(new char[n + 1 + simdjson::SIMDJSON_PADDING]);
    mem[0] = ' ';  // the headroom
    if (size_ > 0) std::memcpy(mem.get() + 1, data(), size_);
    mem_ = std::move(mem);
    cap_ = n;
  }

 private:
  std::unique_ptr<char[]> mem_;
  size_t size_ = 0;
  size_t cap_ = 0;
};

class Reader {
 public:
  Reader(ByteSource& src, std::string name, const EventVisitor& visit, const ReaderOptions& opt)
      : src_(src), name_(std::move(name)), visit_(visit), opt_(opt) {}

  Result<ReadStats> Run() {
    stats_.gzip = src_.gzip();
    STEPSCOPE_RETURN_IF_ERROR(Fill());
    if (buf_.size() >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;  // BOM
    STEPSCOPE_RETURN_IF_ERROR(SkipSpace());
    if (pos_ >= buf_.size()) {
      return Status::Error(name_ + ": empty file (no JSON at all); expected a Chrome trace");
    }
    char c = buf_[pos_];
    if (c == '[') {
      stats_.array_form = true;
      ++pos_;
      STEPSCOPE_RETURN_IF_ERROR(ReadEventArray());
    } else if (c == '{') {
      ++pos_;
      STEPSCOPE_RETURN_IF_ERROR(ReadTopObject());
    } else {
      return Error(
          "top-level value is neither an object {\"traceEvents\": [...]} nor an array "
          "of events");
    }
    STEPSCOPE_RETURN_IF_ERROR(SkipSpace());
    if (pos_ < buf_.size()) Warn("unexpected data after the end of the trace; ignored");
    return std::move(stats_);
  }

 private:
  uint64_t Offset() const { return begin_ + pos_; }
  Status Error(const std::string& what) const {
    return Status::Error(name_ + ": byte " + std::to_string(Offset()) + ": " + what);
  }
  void Warn(const std::string& what) {
    ++stats_.warnings;
    if (stats_.warning_messages.size() < opt_.max_warning_messages) {
      stats_.warning_messages.push_back(name_ + ": byte " + std::to_string(Offset()) + ": " + what);
    }
  }

  // Drops bytes before `keep` and appends more input. Sets eof_ when the source is exhausted.
  Status Fill(size_t keep = std::string::npos) {
    if (keep == std::string::npos) keep = pos_;
    if (keep > 0) {
      buf_.Drop(keep);
      begin_ += keep;
      pos_ -= keep;
    }
    if (eof_) return Status::Ok();
    const size_t old = buf_.size();
    const size_t target = old + std::max(opt_.batch_bytes, old);
    buf_.Reserve(target);
    size_t filled = old;
    while (filled < target) {
      auto got = src_.Read(buf_.data() + filled, target - filled);
      if (!got.ok()) {
        buf_.set_size(filled);
        return got.status();
      }
      if (*got == 0) {
        eof_ = true;
        break;
      }
      filled += *got;
    }
    buf_.set_size(filled);
    stats_.bytes += filled - old;
    return Status::Ok();
  }

  Status SkipSpace() {
    while (true) {
      while (pos_ < buf_.size() && IsSpace(buf_[pos_])) ++pos_;
      if (pos_ < buf_.size() || eof_) return Status::Ok();
      STEPSCOPE_RETURN_IF_ERROR(Fill());
    }
  }

  // Scans one JSON value starting at pos_ (no leading space); sets *end past it. Refills as
  // needed (pos_ may move when the buffer shifts; the value starts at pos_ on return).
  Status ScanValue(size_t* end) {
    size_t p = pos_;
    int depth = 0;
    while (true) {
      const char* base = buf_.data();
      const char* e = base + buf_.size();
      const char* q = base + p;
      while (q < e) {
        char c = *q;
        if (c == '"') {
          const char* close = FindStringEnd(q + 1, e);
          if (close == e) {
            q = e;
            break;
          }
          q = close + 1;
          if (depth == 0) {
            *end = q - base;
            return Status::Ok();
          }
          continue;
        }
        if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (depth == 0) {
            *end = q - base;  // scalar ended by the parent's close
            return Status::Ok();
          }
          if (--depth == 0) {
            *end = q + 1 - base;
            return Status::Ok();
          }
        } else if (depth == 0 && (c == ',' || IsSpace(c))) {
          *end = q - base;
          return Status::Ok();
        }
        ++q;
      }
      if (eof_) return Error("truncated: the file ends inside a value (is it incomplete?)");
      if (buf_.size() - pos_ > opt_.max_metadata_bytes + opt_.max_event_bytes) {
        return Error("a single top-level value is larger than " +
                     std::to_string(opt_.max_metadata_bytes + opt_.max_event_bytes) +
                     " bytes; the file looks corrupt");
      }
      size_t rel = pos_;
      STEPSCOPE_RETURN_IF_ERROR(Fill(rel));
      p = 0;  // rescan from the value start (values outside traceEvents are small)
      depth = 0;
    }
  }

  Status ReadString(std::string* out) {
    size_t end;
    STEPSCOPE_RETURN_IF_ERROR(ScanValue(&end));
    if (buf_[pos_] != '"') return Error("expected a string key");
    std::string_view raw(buf_.data() + pos_, end - pos_);
    try {
      *out = nlohmann::json::parse(raw).get<std::string>();
    } catch (const std::exception&) {
      return Error("invalid string key");
    }
    pos_ = end;
    return Status::Ok();
  }

  Status Expect(char c, const char* what) {
    STEPSCOPE_RETURN_IF_ERROR(SkipSpace());
    if (pos_ >= buf_.size()) {
      return Error(std::string("truncated: expected ") + what + " (is the file incomplete?)");
    }
    if (buf_[pos_] != c) return Error(std::string("expected ") + what);
    ++pos_;
    return Status::Ok();
  }

  Status ReadTopObject() {
    bool saw_events = false;
    STEPSCOPE_RETURN_IF_ERROR(SkipSpace());
    if (pos_ < buf_.size() && buf_[pos_] == '}') {
      ++pos_;
      return Error("the top-level object has no \"traceEvents\" array");
    }
    while (true) {
      STEPSCOPE_RETURN_IF_ERROR(SkipSpace());
      if (pos_ >= buf_.size()) return Error("truncated: the top-level object is not closed");
      std::string key;
      STEPSCOPE_RETURN_IF_ERROR(ReadString(&key));
      STEPSCOPE_RETURN_IF_ERROR(Expect(':', "':' after a key"));
      STEPSCOPE_RETURN_IF_ERROR(SkipSpace());
      if (pos_ >= buf_.size()) return Error("truncated: a key has no value");
      if (key == "traceEvents") {
        if (buf_[pos_] != '[') return Error("\"traceEvents\" is not an array");
        if (saw_events) Warn("a second \"traceEvents\" array; its events are read too");
        saw_events = true;
        ++pos_;
        STEPSCOPE_RETURN_IF_ERROR(ReadEventArray());
      } else {
        size_t end;
        STEPSCOPE_RETURN_IF_ERROR(ScanValue(&end));
        std::string_view raw(buf_.data() + pos_, end - pos_);
        if (raw.size() > opt_.max_metadata_bytes) {
          Warn("metadata key \"" + key + "\" is too large; skipped");
        } else {
          try {
            stats_.metadata[key] = nlohmann::json::parse(raw);
          } catch (const std::exception&) {
            Warn("metadata key \"" + key + "\" is not valid JSON; skipped");
          }
        }
        pos_ = end;
      }
      STEPSCOPE_RETURN_IF_ERROR(SkipSpace());
      if (pos_ >= buf_.size()) return Error("truncated: the top-level object is not closed");
      if (buf_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (buf_[pos_] == '}') {
        ++pos_;
        break;
      }
      return Error("expected ',' or '}' in the top-level object");
    }
    if (!saw_events) return Error("the top-level object has no \"traceEvents\" array");
    return Status::Ok();
  }

  // pos_ is just after '['. Reads elements up to and including the closing ']'.
  //
  // Fast path: cut the buffer after its last "}<space>,<space>{" and parse everything before the
  // cut as one array with simdjson, without scanning it byte by byte. A cut that is not between
  // two top-level elements (inside a string, or between objects of a nested array) leaves an
  // unclosed string or container, so the chunk fails to parse: valid JSON means a correct cut.
  // A chunk that fails, and the last part of the array, go through the exact scanner below, which
  // also names the offending event of an invalid file.
  Status ReadEventArray() {
    while (true) {
      if (!eof_ && buf_.size() - pos_ < opt_.batch_bytes) STEPSCOPE_RETURN_IF_ERROR(Fill(pos_));
      const size_t cut = FindCut();
      if (cut != std::string::npos && ParseChunk(pos_, cut)) {
        pos_ = cut + 1;
        while (buf_[pos_] != ',') ++pos_;  // only space before it, by FindCut
        ++pos_;
        continue;
      }
      bool closed = false;
      STEPSCOPE_RETURN_IF_ERROR(ReadEventArrayExact(/*one_batch=*/true, &closed));
      if (closed) return Status::Ok();
    }
  }

  // Position of the '}' of the last "}<space>,<space>{" after pos_, or npos.
  size_t FindCut() const {
    const char* base = buf_.data();
    size_t end = buf_.size();
    while (end > pos_) {
      const void* hit = memrchr(base + pos_, '{', end - pos_);
      if (hit == nullptr) return std::string::npos;
      size_t i = static_cast<const char*>(hit) - base;
      end = i;
      size_t j = i;
      while (j > pos_ && IsSpace(base[j - 1])) --j;
      if (j <= pos_ || base[j - 1] != ',') continue;
      --j;
      while (j > pos_ && IsSpace(base[j - 1])) --j;
      if (j > pos_ && base[j - 1] == '}') return j - 1;
    }
    return std::string::npos;
  }

  // Parses buf_[begin, end) as the elements of one array, in place: the byte before `begin` (a
  // separator or the headroom) becomes '[' and the byte at `end` (a separator) becomes ']' for
  // the parse, then both are restored. simdjson copies what the visitor reads (strings included)
  // into its own buffers, so the window may change afterwards.
  simdjson::simdjson_result<dom::element> ParseInPlace(size_t begin, size_t end) {
    // `open` may be the headroom (begin == 0): step back from data() + begin rather than add
    // begin - 1, which would wrap.
    char* open = buf_.data() + begin - 1;
    char* close = buf_.data() + end;
    const char before = *open;
    const char after = *close;
    *open = '[';
    *close = ']';
    auto root = parser_.parse(open, end - begin + 2, false);
    *open = before;
    *close = after;
    return root;
  }

  // Parses buf_[begin, cut] as the elements of an array; false (nothing visited) if invalid.
  bool ParseChunk(size_t begin, size_t cut) {
    dom::element root;
    if (ParseInPlace(begin, cut + 1).get(root)) return false;
    dom::array arr;
    if (root.get_array().get(arr)) return false;
    const uint64_t offset = begin_ + begin;  // messages name the chunk's first byte
    for (dom::element el : arr) Visit(el, offset);
    return true;
  }

  // The exact scanner: string, escape and depth aware. With `one_batch`, returns after parsing
  // the complete elements of the current buffer (*closed false) so that the fast path resumes.
  Status ReadEventArrayExact(bool one_batch, bool* closed_out) {
    starts_.clear();
    size_t batch_begin = pos_;  // first byte of the current batch (an element start or space)
    size_t batch_end = pos_;    // end of the last complete element
    size_t elem = pos_;         // start of the element being scanned
    int depth = 0;
    bool in_elem = false;
    size_t p = pos_;
    while (true) {
      const char* base = buf_.data();
      const char* e = base + buf_.size();
      const char* q = base + p;
      bool closed = false;
      while (q < e) {
        char c = *q;
        if (c == '"') {
          if (!in_elem) {
            in_elem = true;
            elem = q - base;
          }
          const char* close = FindStringEnd(q + 1, e);
          if (close == e) {
            q = e;
            break;
          }
          q = close + 1;
          continue;
        }
        if (IsSpace(c)) {
          ++q;
          continue;
        }
        if (depth == 0 && (c == ',' || c == ']')) {
          if (in_elem) {
            starts_.push_back(elem);
            batch_end = q - base;
            in_elem = false;
          } else if (c == ',') {
            pos_ = q - base;
            return Error("empty element in the event array (stray ',')");
          }  // "[]" or a trailing comma before ']': tolerated
          if (c == ']') {
            closed = true;
            ++q;
            break;
          }
          ++q;
          continue;
        }
        if (!in_elem) {
          in_elem = true;
          elem = q - base;
        }
        if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          --depth;
        }
        ++q;
      }
      if (closed) {
        pos_ = q - base;
        *closed_out = true;
        return ParseBatch(batch_begin, batch_end);
      }
      // Out of data: parse the complete elements, keep the partial one, refill.
      if (eof_) {
        pos_ = buf_.size();
        return Error("truncated: the file ends inside the event array after " +
                     std::to_string(stats_.events) + " events (is the file incomplete?)");
      }
      size_t keep = in_elem ? elem : buf_.size();
      if (buf_.size() - keep > opt_.max_event_bytes) {
        pos_ = keep;
        return Error("one event is larger than " + std::to_string(opt_.max_event_bytes) +
                     " bytes; the file looks corrupt");
      }
      const bool progressed = !starts_.empty();
      STEPSCOPE_RETURN_IF_ERROR(ParseBatch(batch_begin, batch_end));
      starts_.clear();
      pos_ = keep;
      if (one_batch && progressed) {  // else keep scanning: the element needs more data
        *closed_out = false;
        return Status::Ok();
      }
      STEPSCOPE_RETURN_IF_ERROR(Fill(keep));
      // Rescan the partial element from its start with fresh state.
      batch_begin = batch_end = elem = 0;
      p = 0;
      depth = 0;
      in_elem = false;
    }
  }

  Status ParseBatch(size_t begin, size_t end) {
    if (starts_.empty()) return Status::Ok();
    // "[" + complete elements + "]" with simdjson's padding.
    size_t first = starts_.front();
    dom::element root;
    if (ParseInPlace(first, end).get(root)) return LocateError(begin, end);
    dom::array arr;
    if (root.get_array().get(arr)) return LocateError(begin, end);
    size_t i = 0;
    for (dom::element el : arr) {
      uint64_t offset = begin_ + (i < starts_.size() ? starts_[i] : first);
      ++i;
      Visit(el, offset);
    }
    return Status::Ok();
  }

  // A batch failed to parse: find the first bad element and name its offset.
  Status LocateError(size_t begin, size_t end) {
    for (size_t i = 0; i < starts_.size(); ++i) {
      size_t s = starts_[i];
      size_t e = i + 1 < starts_.size() ? starts_[i + 1] : end;
      // Trim the separator and space between elements.
      while (e > s && (IsSpace(buf_[e - 1]) || buf_[e - 1] == ',')) --e;
      simdjson::padded_string one(buf_.data() + s, e - s);
      dom::element el;
      auto err = parser_.parse(one).get(el);
      if (err) {
        pos_ = s;
        return Error(std::string("invalid JSON in event ") + std::to_string(stats_.events + i) +
                     ": " + simdjson::error_message(err));
      }
    }
    pos_ = begin;
    return Error("invalid JSON in the event array");
  }

  static bool GetInt(dom::element v, int64_t* out) {
    switch (v.type()) {
      case dom::element_type::INT64:
        *out = v.get_int64().value_unsafe();
        return true;
      case dom::element_type::UINT64:
        *out = static_cast<int64_t>(v.get_uint64().value_unsafe());
        return true;
      case dom::element_type::DOUBLE: {
        double d = v.get_double().value_unsafe();
        if (!(d > -9.2e18 && d < 9.2e18)) return false;
        *out = static_cast<int64_t>(d);
        return true;
      }
      case dom::element_type::STRING: {
        std::string_view s = v.get_string().value_unsafe();
        if (s.size() > 18) return false;
        int64_t x = 0;
        bool any = false;
        for (char c : s) {
          if (c < '0' || c > '9') return false;
          x = x * 10 + (c - '0');
          any = true;
        }
        if (any) *out = x;
        return any;
      }
      default:
        return false;
    }
  }
  static bool GetDouble(dom::element v, double* out) {
    switch (v.type()) {
      case dom::element_type::INT64:
        *out = static_cast<double>(v.get_int64().value_unsafe());
        return true;
      case dom::element_type::UINT64:
        *out = static_cast<double>(v.get_uint64().value_unsafe());
        return true;
      case dom::element_type::DOUBLE:
        *out = v.get_double().value_unsafe();
        return true;
      case dom::element_type::STRING: {  // some writers quote numbers
        std::string s(v.get_string().value_unsafe());
        char* endp = nullptr;
        double d = std::strtod(s.c_str(), &endp);
        if (endp == s.c_str() || *endp != 0 || !std::isfinite(d)) return false;
        *out = d;
        return true;
      }
      default:
        return false;
    }
  }
  static std::string_view GetStr(dom::element v) {
    std::string_view s;
    if (v.get_string().get(s)) return {};
    return s;
  }

  void Visit(dom::element el, uint64_t offset) {
    dom::object obj;
    if (el.get_object().get(obj)) {
      ++stats_.warnings;
      if (stats_.warning_messages.size() < opt_.max_warning_messages) {
        stats_.warning_messages.push_back(name_ + ": byte " + std::to_string(offset) +
                                          ": an element of the event array is not an object; "
                                          "skipped");
      }
      return;
    }
    TraceEvent ev;
    ev.byte_offset = offset;
    for (auto [key, value] : obj) {
      switch (key.size()) {
        case 2:
          if (Eq(key, "ph")) {
            std::string_view s = GetStr(value);
            if (!s.empty()) ev.ph = s[0];
          } else if (Eq(key, "ts")) {
            ev.has_ts = GetDouble(value, &ev.ts);
          }
          break;
        case 3:
          if (Eq(key, "dur")) {
            ev.has_dur = GetDouble(value, &ev.dur);
          } else if (Eq(key, "pid")) {
            if (value.is_string())
              ev.pid_str = GetStr(value);
            else
              GetInt(value, &ev.pid);
          } else if (Eq(key, "tid")) {
            if (value.is_string())
              ev.tid_str = GetStr(value);
            else
              GetInt(value, &ev.tid);
          } else if (Eq(key, "cat")) {
            ev.cat = GetStr(value);
          }
          break;
        case 4:
          if (Eq(key, "name")) {
            ev.name = GetStr(value);
          } else if (Eq(key, "args")) {
            VisitArgs(value, &ev);
          }
          break;
        default:
          break;
      }
    }
    ++stats_.events;
    visit_(ev);
  }

  // The args the importers use, dispatched on the key's length first: most events carry a
  // dozen args that match none of them.
  static void VisitArgs(dom::element value, TraceEvent* ev) {
    dom::object args;
    if (value.get_object().get(args)) return;
    for (auto [key, v] : args) {
      switch (key.size()) {
        case 3:
          if (Eq(key, "seq") || Eq(key, "Seq")) GetInt(v, &ev->seq);
          break;
        case 4:
          if (Eq(key, "step")) {
            GetInt(v, &ev->step);
          } else if (Eq(key, "name")) {
            ev->meta_name = GetStr(v);
          }
          break;
        case 5:
          if (Eq(key, "dtype")) {
            ev->dtype = GetStr(v);
          } else if (Eq(key, "bytes")) {
            GetInt(v, &ev->bytes);
          }
          break;
        case 6:
          if (Eq(key, "stream")) {
            GetInt(v, &ev->stream);
          } else if (Eq(key, "warmup")) {
            bool b = false;
            if (!v.get_bool().get(b)) ev->warmup = b ? 1 : 0;
          }
          break;
        case 7:
          if (Eq(key, "pg_name")) {
            ev->process_group = GetStr(v);
          } else if (Eq(key, "samples")) {
            GetInt(v, &ev->samples);
          }
          break;
        case 11:
          if (Eq(key, "External id")) GetInt(v, &ev->external_id);
          break;
        case 13:
          if (Eq(key, "In msg nelems")) GetInt(v, &ev->in_msg_nelems);
          break;
        case 15:
          if (Eq(key, "Collective name")) ev->collective_name = GetStr(v);
          break;
        case 18:
          if (Eq(key, "Process Group Name")) ev->process_group = GetStr(v);
          break;
        default:
          break;
      }
    }
  }

  ByteSource& src_;
  std::string name_;
  const EventVisitor& visit_;
  const ReaderOptions& opt_;
  ReadStats stats_;
  Window buf_;
  uint64_t begin_ = 0;  // file offset of buf_[0]
  size_t pos_ = 0;
  bool eof_ = false;
  std::vector<size_t> starts_;
  dom::parser parser_;
};

}  // namespace

Result<ReadStats> ReadChromeTrace(const std::string& path, const EventVisitor& visit,
                                  const ReaderOptions& options) {
  auto src = OpenByteSource(path);
  if (!src.ok()) return src.status();
  Reader reader(**src, path, visit, options);
  return reader.Run();
}

Result<ReadStats> ReadChromeTraceBuffer(std::string_view data, const std::string& name,
                                        const EventVisitor& visit, const ReaderOptions& options) {
  auto src = MemoryByteSource(data, name);
  Reader reader(*src, name, visit, options);
  return reader.Run();
}

}  // namespace stepscope::trace
