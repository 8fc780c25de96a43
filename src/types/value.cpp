// Value encoding rules (see value.hpp).
#include "hotkv/types/value.hpp"

#include "hotkv/types/hash.hpp"
#include "hotkv/types/inventory.hpp"
#include "hotkv/types/list.hpp"
#include "hotkv/types/set.hpp"
#include "hotkv/types/stream.hpp"
#include "hotkv/types/zset.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

Value::Value() = default;
Value::~Value() = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(Value&&) noexcept = default;

Value Value::clone() const {
  Value out;
  out.expire_at_ms_ = expire_at_ms_;
  out.integer_ = integer_;
  out.str_ = str_;
  out.type_ = type_;
  out.int_encoded_ = int_encoded_;
  out.raw_ = raw_;
  if (stream_) {
    out.stream_ = stream_->clone();
  }
  if (inventory_) {
    out.inventory_ = inventory_->clone();
  }
  if (set_) {
    out.set_ = set_->clone();
  }
  if (hash_) {
    out.hash_ = hash_->clone();
  }
  if (zset_) {
    out.zset_ = zset_->clone();
  }
  if (list_) {
    out.list_ = list_->clone();
  }
  return out;
}

Value Value::from_stream(std::unique_ptr<Stream> stream) {
  Value v;
  v.type_ = ValueType::kStream;
  v.stream_ = std::move(stream);
  return v;
}

Value Value::from_inventory(std::unique_ptr<Inventory> inventory) {
  Value v;
  v.type_ = ValueType::kInventory;
  v.inventory_ = std::move(inventory);
  return v;
}

Value Value::from_set(std::unique_ptr<Set> set) {
  Value v;
  v.type_ = ValueType::kSet;
  v.set_ = std::move(set);
  return v;
}

Value Value::from_hash(std::unique_ptr<Hash> hash) {
  Value v;
  v.type_ = ValueType::kHash;
  v.hash_ = std::move(hash);
  return v;
}

Value Value::from_zset(std::unique_ptr<ZSet> zset) {
  Value v;
  v.type_ = ValueType::kZSet;
  v.zset_ = std::move(zset);
  return v;
}

Value Value::from_list(std::unique_ptr<List> list) {
  Value v;
  v.type_ = ValueType::kList;
  v.list_ = std::move(list);
  return v;
}

size_t Value::memory_bytes() const {
  return sizeof(Value) + str_.capacity() + (stream_ ? stream_->memory_bytes() : 0) +
         (inventory_ ? inventory_->memory_bytes() : 0) + (set_ ? set_->memory_bytes() : 0) +
         (hash_ ? hash_->memory_bytes() : 0) + (zset_ ? zset_->memory_bytes() : 0) +
         (list_ ? list_->memory_bytes() : 0);
}

Value Value::from_string(std::string_view s) {
  Value v;
  v.set_string(s);
  return v;
}

Value Value::from_text(std::string_view s) {
  Value v;
  v.set_text(s);
  return v;
}

void Value::set_string(std::string_view s) {
  int64_t n = 0;
  if (is_canonical_int64(s, n)) {
    set_int(n);
    return;
  }
  set_text(s);
}

void Value::set_text(std::string_view s) {
  int_encoded_ = false;
  raw_ = false;
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
  raw_ = true;
  return str_;
}

const char* Value::encoding_name() const {
  if (type_ == ValueType::kStream) {
    return "stream";
  }
  if (type_ == ValueType::kInventory) {
    return "inventory";
  }
  if (type_ == ValueType::kSet) {
    return set_->encoding_name();
  }
  if (type_ == ValueType::kHash) {
    return hash_->listpack() ? "listpack" : "hashtable";
  }
  if (type_ == ValueType::kZSet) {
    return zset_->encoding_name();
  }
  if (type_ == ValueType::kList) {
    return "quicklist";  // Redis 7.0 reports every list so
  }
  if (int_encoded_) {
    return "int";
  }
  return !raw_ && str_.size() <= 44 ? "embstr" : "raw";
}

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kString:
      return "string";
    case ValueType::kStream:
      return "stream";
    case ValueType::kInventory:
      return "inventory";  // HotKV's own type; Redis has no equivalent (docs/inventory.md)
    case ValueType::kSet:
      return "set";
    case ValueType::kHash:
      return "hash";
    case ValueType::kZSet:
      return "zset";
    case ValueType::kList:
      return "list";
  }
  return "none";
}

}  // namespace hotkv
