// Status and Result<T> (see status.hpp).
#include "hotkv/util/status.hpp"

namespace hotkv {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kConflict:
      return "Conflict";
    case StatusCode::kRefused:
      return "Refused";
    case StatusCode::kIoError:
      return "IoError";
    case StatusCode::kCorruption:
      return "Corruption";
  }
  return "Unknown";
}

std::string Status::to_string() const {
  if (is_ok()) {
    return "OK";
  }
  std::string out(status_code_name(code_));
  out.append(": ").append(message_);
  return out;
}

Status Status::with_context(std::string_view context) const {
  if (is_ok()) {
    return *this;
  }
  std::string m(context);
  m.append(": ").append(message_);
  return {code_, std::move(m)};
}

}  // namespace hotkv
