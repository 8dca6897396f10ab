#include "core/json_text.h"

#include <charconv>
#include <cmath>

namespace stepscope {

void AppendJsonNumber(double value, std::string& out) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, result.ptr);
}

void AppendJsonInt(int64_t value, std::string& out) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, result.ptr);
}

void AppendJsonFixed(double value, int decimals, std::string& out) {
  if (!std::isfinite(value)) value = 0;
  char buf[64];
  const auto result =
      std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed, decimals);
  if (result.ec != std::errc()) {
    out.push_back('0');  // beyond 1e40: not a time or a size this project writes
    return;
  }
  out.append(buf, result.ptr);
}

void JsonObjectWriter::Key(std::string_view key) {
  if (!first_) out_.push_back(',');
  first_ = false;
  out_.push_back('"');
  out_ += key;
  out_ += "\":";
}

JsonObjectWriter& JsonObjectWriter::Number(std::string_view key, double value) {
  Key(key);
  AppendJsonNumber(value, out_);
  return *this;
}

JsonObjectWriter& JsonObjectWriter::Int(std::string_view key, int64_t value) {
  Key(key);
  AppendJsonInt(value, out_);
  return *this;
}

JsonObjectWriter& JsonObjectWriter::Bool(std::string_view key, bool value) {
  Key(key);
  out_ += value ? "true" : "false";
  return *this;
}

std::string& JsonObjectWriter::Raw(std::string_view key) {
  Key(key);
  return out_;
}

}  // namespace stepscope
