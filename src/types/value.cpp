// Value encoding rules (see value.hpp).
#include "hotkv/types/value.hpp"

#include "hotkv/util/numbers.hpp"

namespace hotkv {

Value Value::from_string(std::string_view s) {
  Value v;
  v.set_string(s);
  return v;
}

void Value::set_string(std::string_view s) {
  int64_t n = 0;
  if (is_canonical_int64(s, n)) {
    set_int(n);
    return;
  }
  int_encoded_ = false;
  str_.assign(s.data(), s.size());
}

std::string_view Value::str(std::string& scratch) const {
  if (int_encoded_) {
    scratch.clear();
    append_int64(scratch, integer_);
    return scratch;
  }
  return str_;
}

size_t Value::str_len() const {
  if (!int_encoded_) {
    return str_.size();
  }
  std::string scratch;
  append_int64(scratch, integer_);
  return scratch.size();
}

std::string& Value::mutable_raw() {
  if (int_encoded_) {
    str_.clear();
    append_int64(str_, integer_);
    int_encoded_ = false;
  }
  return str_;
}

const char* Value::encoding_name() const {
  if (int_encoded_) {
    return "int";
  }
  return str_.size() <= 44 ? "embstr" : "raw";
}

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kString:
      return "string";
  }
  return "none";
}

}  // namespace hotkv
