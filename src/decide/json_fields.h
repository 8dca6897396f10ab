// Strict reading of diagnosis.json fields: every accessor names the full path of the field it
// failed on ("points[1].components.compute") and what is wrong, for the readers of the
// diagnosis and its parts.
#pragma once

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/estimate.h"
#include "core/json_number.h"
#include "core/status.h"
#include "core/vocabulary.h"

namespace stepscope::decide::json_fields {

using nlohmann::json;

inline std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// Free text read from the file shows in terminals and pages: control characters (other than tab
// and newline) become U+FFFD, so that no string can move a terminal's cursor or recolour it.
inline std::string PlainText(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n') || u == 0x7f) {
      out += "\xEF\xBF\xBD";
    } else {
      out += c;
    }
  }
  return out;
}

inline void MakePlain(std::string* s) { *s = PlainText(*s); }
inline void MakePlain(std::vector<std::string>* v) {
  for (std::string& s : *v) MakePlain(&s);
}
inline void MakePlain(std::map<std::string, std::string>* m) {
  std::map<std::string, std::string> plain;
  for (const auto& [k, v] : *m) plain[PlainText(k)] = PlainText(v);
  *m = std::move(plain);
}
template <typename T>
void MakePlain(T*) {}

template <typename T>
Status Get(const json& j, const std::string& path, const char* key, T* out) {
  const std::string where = Join(path, key);
  if (!j.is_object()) {
    return Status::Error(fmt::format("diagnosis.json: '{}' is not an object", path));
  }
  auto it = j.find(key);
  if (it == j.end()) {
    return Status::Error(fmt::format("diagnosis.json: missing field '{}'", where));
  }
  if constexpr (std::is_arithmetic_v<T>) {
    if (!JsonValueTo(*it, out)) {
      return Status::Error(
          fmt::format("diagnosis.json: field '{}' has the wrong type or is out of range ({})",
                      where, it->dump()));
    }
    return Status::Ok();
  }
  try {
    *out = it->template get<T>();
  } catch (const json::exception& e) {
    return Status::Error(
        fmt::format("diagnosis.json: field '{}' has the wrong type ({})", where, it->type_name()));
  }
  MakePlain(out);
  return Status::Ok();
}

inline Status GetArray(const json& j, const std::string& path, const char* key, const json** out) {
  const std::string where = Join(path, key);
  if (!j.is_object()) {
    return Status::Error(fmt::format("diagnosis.json: '{}' is not an object", path));
  }
  auto it = j.find(key);
  if (it == j.end()) return Status::Error(fmt::format("diagnosis.json: missing field '{}'", where));
  if (!it->is_array()) {
    return Status::Error(fmt::format("diagnosis.json: field '{}' is not an array", where));
  }
  *out = &*it;
  return Status::Ok();
}

inline Status GetObject(const json& j, const std::string& path, const char* key, const json** out) {
  const std::string where = Join(path, key);
  auto it = j.find(key);
  if (it == j.end()) return Status::Error(fmt::format("diagnosis.json: missing field '{}'", where));
  if (!it->is_object()) {
    return Status::Error(fmt::format("diagnosis.json: field '{}' is not an object", where));
  }
  *out = &*it;
  return Status::Ok();
}

// A word of the vocabulary (core/vocabulary.h); the error lists the accepted words.
template <typename Enum>
Status GetEnum(const json& j, const std::string& path, const char* key, Enum* out) {
  std::string text;
  STEPSCOPE_RETURN_IF_ERROR(Get(j, path, key, &text));
  std::optional<Enum> v = Parse<Enum>(text);
  if (!v) {
    return Status::Error(fmt::format("diagnosis.json: field '{}' is '{}', expected one of: {}",
                                     Join(path, key), text, ValueList<Enum>()));
  }
  *out = *v;
  return Status::Ok();
}

inline Status GetEstimate(const json& j, const std::string& path, const char* key, Estimate* out) {
  const std::string where = Join(path, key);
  auto it = j.find(key);
  if (it == j.end()) return Status::Error(fmt::format("diagnosis.json: missing field '{}'", where));
  Result<Estimate> e = EstimateFromJson(*it, where);
  if (!e.ok()) return Status::Error("diagnosis.json: " + e.status().message());
  *out = *e;
  return Status::Ok();
}

inline std::string At(const std::string& path, const char* key, size_t i) {
  return fmt::format("{}[{}]", Join(path, key), i);
}

}  // namespace stepscope::decide::json_fields
