#include "trace/chrome_writer.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/json_text.h"

namespace stepscope::trace {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

// Serialises a JSON value with the same escaping as names (so no "</script>" can appear).
void AppendJsonValue(const nlohmann::json& v, std::string& out) {
  switch (v.type()) {
    case nlohmann::json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, item] : v.items()) {
        if (!first) out.push_back(',');
        first = false;
        ChromeTraceWriter::AppendJsonString(key, out);
        out.push_back(':');
        AppendJsonValue(item, out);
      }
      out.push_back('}');
      break;
    }
    case nlohmann::json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& item : v) {
        if (!first) out.push_back(',');
        first = false;
        AppendJsonValue(item, out);
      }
      out.push_back(']');
      break;
    }
    case nlohmann::json::value_t::string:
      ChromeTraceWriter::AppendJsonString(v.get_ref<const std::string&>(), out);
      break;
    case nlohmann::json::value_t::number_float: {
      AppendJsonNumber(v.get<double>(), out);
      break;
    }
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded:
      out += "null";
      break;
    default:  // null, boolean, integers
      out += v.dump();
  }
}

}  // namespace

Result<std::unique_ptr<ChromeTraceWriter>> ChromeTraceWriter::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return Status::Error(path + ": cannot open for writing (" + std::strerror(errno) +
                         "); check that the directory exists and is writable");
  }
  auto writer = std::unique_ptr<ChromeTraceWriter>(new ChromeTraceWriter(f, path));
  writer->buffer_ = "{\"traceEvents\":[";
  return writer;
}

ChromeTraceWriter::ChromeTraceWriter(std::FILE* file, std::string path)
    : file_(file), path_(std::move(path)) {
  buffer_.reserve(kFlushBytes + 4096);
}

ChromeTraceWriter::~ChromeTraceWriter() { (void)Close(); }

void ChromeTraceWriter::AppendJsonString(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '<':
      case '>':
      case '&':
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

void ChromeTraceWriter::BeginEvent() {
  if (!first_event_) buffer_ += ",\n";
  first_event_ = false;
}

void ChromeTraceWriter::AppendMicros(double seconds) {
  AppendJsonFixed(seconds * 1e6, 3, buffer_);  // non-finite becomes 0: the file stays valid
}

void ChromeTraceWriter::MaybeFlush() {
  if (buffer_.size() >= kFlushBytes) (void)Flush();
}

Status ChromeTraceWriter::Flush() {
  if (file_ == nullptr || buffer_.empty()) return Status::Ok();
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    write_failed_ = true;
  }
  buffer_.clear();
  if (write_failed_) {
    return Status::Error(path_ + ": write failed (" + std::strerror(errno) +
                         "); is the disk full?");
  }
  return Status::Ok();
}

void ChromeTraceWriter::ProcessName(int pid, const std::string& name) {
  if (closed_) return;
  BeginEvent();
  buffer_ += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":";
  AppendJsonInt(pid, buffer_);
  buffer_ += ",\"tid\":0,\"args\":{\"name\":";
  AppendJsonString(name, buffer_);
  buffer_ += "}}";
  MaybeFlush();
}

void ChromeTraceWriter::AppendPidTid(int pid, int tid) {
  buffer_ += ",\"pid\":";
  AppendJsonInt(pid, buffer_);
  buffer_ += ",\"tid\":";
  AppendJsonInt(tid, buffer_);
}

void ChromeTraceWriter::ThreadName(int pid, int tid, const std::string& name) {
  if (closed_) return;
  BeginEvent();
  buffer_ += "{\"ph\":\"M\",\"name\":\"thread_name\"";
  AppendPidTid(pid, tid);
  buffer_ += ",\"args\":{\"name\":";
  AppendJsonString(name, buffer_);
  buffer_ += "}}";
  MaybeFlush();
}

void ChromeTraceWriter::Complete(int pid, int tid, const std::string& name,
                                 const std::string& category, double ts_seconds, double dur_seconds,
                                 const nlohmann::json& args) {
  if (closed_) return;
  BeginEvent();
  buffer_ += "{\"ph\":\"X\",\"name\":";
  AppendJsonString(name, buffer_);
  buffer_ += ",\"cat\":";
  AppendJsonString(category, buffer_);
  AppendPidTid(pid, tid);
  buffer_ += ",\"ts\":";
  AppendMicros(ts_seconds);
  buffer_ += ",\"dur\":";
  AppendMicros(dur_seconds);
  if (!args.is_null() && !(args.is_object() && args.empty())) {
    buffer_ += ",\"args\":";
    AppendJsonValue(args, buffer_);
  }
  buffer_ += "}";
  MaybeFlush();
}

void ChromeTraceWriter::Instant(int pid, int tid, const std::string& name, double ts_seconds) {
  PointEvent("{\"ph\":\"i\",\"s\":\"t\",\"name\":", pid, tid, name, nullptr, ts_seconds);
}

void ChromeTraceWriter::FlowStart(int pid, int tid, uint64_t id, const std::string& name,
                                  double ts_seconds) {
  PointEvent("{\"ph\":\"s\",\"cat\":\"flow\",\"name\":", pid, tid, name, &id, ts_seconds);
}

void ChromeTraceWriter::FlowEnd(int pid, int tid, uint64_t id, const std::string& name,
                                double ts_seconds) {
  PointEvent("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"flow\",\"name\":", pid, tid, name, &id,
             ts_seconds);
}

void ChromeTraceWriter::PointEvent(const char* head, int pid, int tid, const std::string& name,
                                   const uint64_t* id, double ts_seconds) {
  if (closed_) return;
  BeginEvent();
  buffer_ += head;
  AppendJsonString(name, buffer_);
  if (id) {
    buffer_ += ",\"id\":";
    buffer_ += std::to_string(*id);
  }
  AppendPidTid(pid, tid);
  buffer_ += ",\"ts\":";
  AppendMicros(ts_seconds);
  buffer_ += "}";
  MaybeFlush();
}

void ChromeTraceWriter::Metadata(const std::string& key, const nlohmann::json& value) {
  if (closed_ || key == "traceEvents" || key == "displayTimeUnit") return;
  metadata_[key] = value;
}

Status ChromeTraceWriter::Close() {
  if (closed_) return close_status_;
  closed_ = true;
  buffer_ += "\n],\"displayTimeUnit\":\"ms\"";
  for (const auto& [key, value] : metadata_.items()) {
    buffer_ += ",\n";
    AppendJsonString(key, buffer_);
    buffer_ += ":";
    AppendJsonValue(value, buffer_);
  }
  buffer_ += "}\n";
  close_status_ = Flush();
  if (std::fclose(file_) != 0 && close_status_.ok()) {
    close_status_ =
        Status::Error(path_ + ": close failed (" + std::strerror(errno) + "); is the disk full?");
  }
  file_ = nullptr;
  return close_status_;
}

}  // namespace stepscope::trace
