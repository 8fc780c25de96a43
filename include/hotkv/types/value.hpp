// The value stored under a key. It knows nothing of RESP: commands translate. Strings that
// are canonical integers are kept as an int64 so INCR/DECR never round-trip through text;
// aggregate types (streams, inventory items, sets, hashes, sorted sets, lists) hang off the
// same struct.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace hotkv {

inline constexpr int64_t kNoExpiry = -1;

enum class ValueType : uint8_t { kString, kStream, kInventory, kSet, kHash, kZSet, kList };

class Stream;
class Inventory;
class Set;
class Hash;
class ZSet;
class List;

// Move-only: aggregate types own their contents; COPY uses clone().
class Value {
 public:
  Value();
  ~Value();
  Value(Value&&) noexcept;
  Value& operator=(Value&&) noexcept;
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  Value clone() const;

  static Value from_stream(std::unique_ptr<Stream> stream);
  static Value from_inventory(std::unique_ptr<Inventory> inventory);
  static Value from_set(std::unique_ptr<Set> set);
  static Value from_hash(std::unique_ptr<Hash> hash);
  static Value from_zset(std::unique_ptr<ZSet> zset);
  static Value from_list(std::unique_ptr<List> list);
  static Value from_string(std::string_view s);
  // The bytes as they are, even when they spell a canonical integer: Redis keeps INCRBYFLOAT's
  // result ("11" included) as a plain string, so OBJECT ENCODING says embstr, not int.
  static Value from_text(std::string_view s);
  static Value from_int(int64_t v) {
    Value out;
    out.int_encoded_ = true;
    out.integer_ = v;
    return out;
  }

  ValueType type() const { return type_; }
  // Non-null exactly when type() is kStream.
  Stream* stream() const { return stream_.get(); }
  // Non-null exactly when type() is kInventory.
  Inventory* inventory() const { return inventory_.get(); }
  // Non-null exactly when type() is kSet.
  Set* set() const { return set_.get(); }
  // Non-null exactly when type() is kHash.
  Hash* hash() const { return hash_.get(); }
  // Non-null exactly when type() is kZSet.
  ZSet* zset() const { return zset_.get(); }
  // Non-null exactly when type() is kList.
  List* list() const { return list_.get(); }
  bool is_int() const { return int_encoded_; }
  int64_t int_value() const { return integer_; }
  // The string bytes; for an integer-encoded value this formats into `scratch`.
  std::string_view str(std::string& scratch) const;
  size_t str_len() const;

  void set_int(int64_t v) {
    int_encoded_ = true;
    raw_ = false;
    integer_ = v;
    str_.clear();
  }
  void set_string(std::string_view s);
  // As from_text, in place.
  void set_text(std::string_view s);
  // Gives mutable raw bytes (converting an integer encoding to text first), for APPEND and
  // SETRANGE. The string is "raw" for OBJECT ENCODING from then on, whatever its length, as a
  // Redis string modified in place is, until it is replaced.
  std::string& mutable_raw();

  int64_t expire_at_ms() const { return expire_at_ms_; }
  bool has_expiry() const { return expire_at_ms_ != kNoExpiry; }
  // Only the keyspace sets deadlines, so that its expires count and wheel stay consistent.
  void set_expire_raw(int64_t at_ms) { expire_at_ms_ = at_ms; }

  // OBJECT ENCODING as Redis names it: "int", "embstr" (<= 44 bytes, never modified in place)
  // or "raw".
  const char* encoding_name() const;
  size_t memory_bytes() const;

 private:
  int64_t expire_at_ms_ = kNoExpiry;
  int64_t integer_ = 0;
  std::string str_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Inventory> inventory_;
  std::unique_ptr<Set> set_;
  std::unique_ptr<Hash> hash_;
  std::unique_ptr<ZSet> zset_;
  std::unique_ptr<List> list_;
  ValueType type_ = ValueType::kString;
  bool int_encoded_ = false;
  bool raw_ = false;  // modified in place (mutable_raw): reported as "raw"
};

const char* value_type_name(ValueType t);

}  // namespace hotkv
