// Status and Result<T>: errors as values at the edges of the program (files, MPI, parsing).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace stepscope {

// A success or an error message. The message names what failed and what to do about it,
// e.g. "data/train.gz: field 'magic' is 1234, expected 2051 (is this an IDX image file?)".
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }
  // Prefixes context to an error ("while reading X: ..."); no-op on success.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(context + ": " + *message_);
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : value_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(value_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(value_); }
  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace stepscope

// Returns early from the enclosing function when `expr` (a Status) is an error.
#define STEPSCOPE_RETURN_IF_ERROR(expr) \
  do {                                  \
    ::stepscope::Status _st = (expr);   \
    if (!_st.ok()) return _st;          \
  } while (0)
