// Writing JSON text directly, without building a document first: for records written on a hot
// path (one per training step). Numbers use their shortest form that reads back exactly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stepscope {

// Shortest round-trip form; NaN and infinities become null (JSON has neither).
void AppendJsonNumber(double value, std::string& out);
void AppendJsonInt(int64_t value, std::string& out);
// Fixed notation with `decimals` digits after the point (non-finite values become 0).
void AppendJsonFixed(double value, int decimals, std::string& out);

// One JSON object written field by field into `out`. Keys are written as given: pass plain
// identifiers (no characters that need escaping).
class JsonObjectWriter {
 public:
  explicit JsonObjectWriter(std::string& out) : out_(out) { out_.push_back('{'); }
  JsonObjectWriter& Number(std::string_view key, double value);
  JsonObjectWriter& Int(std::string_view key, int64_t value);
  JsonObjectWriter& Bool(std::string_view key, bool value);
  // Starts a field whose value the caller appends to out() itself (an array, a nested object).
  std::string& Raw(std::string_view key);
  void End() { out_.push_back('}'); }
  std::string& out() { return out_; }

 private:
  void Key(std::string_view key);
  std::string& out_;
  bool first_ = true;
};

}  // namespace stepscope
