// Status and Result<T>: how code below the commands layer says that something failed and why,
// without exceptions and without spelling protocol text. A Status is a code (what kind of
// failure, for the caller to branch on) and a message (for a log line or, once the commands
// layer has chosen the reply, the tail of an error text). Result<T> is a value or a failed
// Status. Commands turn them into replies (commands/errors.hpp owns the reply texts).
//
// Plain values: any thread may create, copy and read them. An ok Status holds no string, so
// returning success costs nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "hotkv/util/assert.hpp"

namespace hotkv {

enum class StatusCode : uint8_t {
  kOk,
  kInvalidArgument,  // the input is malformed or out of range (a bad value, a bad line)
  kNotFound,         // what was asked for does not exist (a setting, a file, a client)
  kConflict,         // the input is fine but clashes with the current state
  kRefused,          // allowed in general, refused now (an immutable setting, a hook said no)
  kIoError,          // the operating system failed a read, a write or an fsync
  kCorruption,       // stored data is unreadable
};

// The code's name in CamelCase ("InvalidArgument"), for logs and tests.
std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  // Success.
  Status() = default;
  // REQUIRES: code != kOk (use Status() for success).
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {
    HOTKV_ASSERT(code != StatusCode::kOk);
  }

  static Status ok() { return Status(); }
  static Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status conflict(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
  static Status refused(std::string m) { return {StatusCode::kRefused, std::move(m)}; }
  static Status io_error(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // Why it failed; empty when ok.
  const std::string& message() const { return message_; }
  // "OK", or "<CodeName>: <message>".
  std::string to_string() const;

  // The same failure with "<context>: " in front of its message (a file and line, a setting).
  // An ok Status stays ok.
  Status with_context(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A T, or the Status that says why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit, so `return value;` works
  // REQUIRES: !status.is_ok().
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit, `return status;`
    HOTKV_ASSERT(!status_.is_ok());
  }

  bool is_ok() const { return value_.has_value(); }
  // Ok when there is a value.
  const Status& status() const { return status_; }
  // REQUIRES: is_ok().
  T& value() & {
    HOTKV_ASSERT(is_ok());
    return *value_;
  }
  const T& value() const& {
    HOTKV_ASSERT(is_ok());
    return *value_;
  }
  T&& value() && {
    HOTKV_ASSERT(is_ok());
    return std::move(*value_);
  }
  T value_or(T fallback) const { return is_ok() ? *value_ : std::move(fallback); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace hotkv
