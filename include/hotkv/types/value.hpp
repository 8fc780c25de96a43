// The value stored under a key. It knows nothing of RESP: commands translate. Strings that
// are canonical integers are kept as an int64 so INCR/DECR never round-trip through text;
// aggregate types (streams, inventory items, sets, hashes, sorted sets, lists) hang off the
// same object.
//
// A Value is 16 bytes, because a keyspace holds millions of them (docs/architecture.md,
// "Memory per key"): an 8-byte header (type, representation, flags, inline length and the
// 24-bit access clock) and one payload word. The word holds, by representation:
//   kInt     the int64 itself;
//   kInline  up to 8 string bytes (their count in the header): no allocation at all;
//   kText    a pointer to a compact heap block, a 4-byte length then the bytes;
//   kRaw     a pointer to a std::string, for strings APPEND/SETRANGE grow in place;
//   kObject  a pointer to the aggregate that type() names.
// A deadline is rare next to keys without one, so it does not take a word in every value:
// a value with a deadline moves its payload word into a small heap box {deadline, word} and
// the header's kHasExpiry flag says so, as Redis keeps deadlines in a table of their own.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
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
  Value() = default;
  ~Value() { destroy(); }
  Value(Value&& other) noexcept { take(other); }
  Value& operator=(Value&& other) noexcept {
    if (this != &other) {
      destroy();
      take(other);
    }
    return *this;
  }
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  // A deep copy with the deadline but not the access clock: a copy is a new object.
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
    out.set_int(v);
    return out;
  }

  ValueType type() const { return type_; }
  // Non-null exactly when type() is kStream.
  Stream* stream() const { return object_if<Stream>(ValueType::kStream); }
  // Non-null exactly when type() is kInventory.
  Inventory* inventory() const { return object_if<Inventory>(ValueType::kInventory); }
  // Non-null exactly when type() is kSet.
  Set* set() const { return object_if<Set>(ValueType::kSet); }
  // Non-null exactly when type() is kHash.
  Hash* hash() const { return object_if<Hash>(ValueType::kHash); }
  // Non-null exactly when type() is kZSet.
  ZSet* zset() const { return object_if<ZSet>(ValueType::kZSet); }
  // Non-null exactly when type() is kList.
  List* list() const { return object_if<List>(ValueType::kList); }
  bool is_int() const { return rep_ == Rep::kInt; }
  int64_t int_value() const { return rep_ == Rep::kInt ? word().integer : 0; }
  // The string bytes; for an integer-encoded value this formats into `scratch`. The view is
  // valid until the value or its deadline changes (a deadline may move inline bytes).
  std::string_view str(std::string& scratch) const;
  size_t str_len() const;

  void set_int(int64_t v) {
    release_payload();
    rep_ = Rep::kInt;
    inline_len_ = 0;
    word().integer = v;
  }
  void set_string(std::string_view s);
  // As from_text, in place.
  void set_text(std::string_view s);
  // Gives mutable raw bytes (converting any other string encoding first), for APPEND and
  // SETRANGE. The string is "raw" for OBJECT ENCODING from then on, whatever its length, as a
  // Redis string modified in place is, until it is replaced.
  std::string& mutable_raw();

  int64_t expire_at_ms() const { return has_expiry() ? box()->at_ms : kNoExpiry; }
  bool has_expiry() const { return (flags_ & kHasExpiry) != 0; }
  // Only the keyspace sets deadlines, so that its expires count and wheel stay consistent.
  void set_expire_raw(int64_t at_ms);

  // The access clock (util/access_clock.hpp): LRU seconds or LFU counter and minutes, 24 bits.
  // has_access_clock() is false for a value no keyspace has stamped yet (a new object).
  uint32_t access_clock() const { return clock_; }
  bool has_access_clock() const { return (flags_ & kClockSet) != 0; }
  void set_access_clock(uint32_t clock) {
    clock_ = clock & kClockMask;
    flags_ |= kClockSet;
  }

  // Exempt from eviction under every maxmemory-policy (docs/operations.md, "Memory"): rate
  // limiter keys set it when they store their state. Inventory items are exempt by type.
  // The flag lives in the value, so a SET over the key (a new value) clears it.
  bool pinned() const { return (flags_ & kPinned) != 0 || type_ == ValueType::kInventory; }
  void set_pinned() { flags_ |= kPinned; }

  // OBJECT ENCODING as Redis names it: "int", "embstr" (<= 44 bytes, never modified in place)
  // or "raw".
  const char* encoding_name() const;
  size_t memory_bytes() const;

 private:
  enum class Rep : uint8_t { kInline, kInt, kText, kRaw, kObject };
  static constexpr uint8_t kHasExpiry = 1;
  static constexpr uint8_t kClockSet = 2;
  static constexpr uint8_t kPinned = 4;
  static constexpr uint32_t kClockMask = (1u << 24) - 1;
  static constexpr size_t kInlineMax = 8;

  union Word {
    int64_t integer;
    char bytes[kInlineMax];
    void* ptr;
  };
  struct ExpiryBox {
    int64_t at_ms;
    Word word;
  };

  ExpiryBox* box() const { return static_cast<ExpiryBox*>(word_.ptr); }
  Word& word() { return has_expiry() ? box()->word : word_; }
  const Word& word() const { return has_expiry() ? box()->word : word_; }
  template <class T>
  T* object_if(ValueType t) const {
    return type_ == t ? static_cast<T*>(word().ptr) : nullptr;
  }

  // Frees what the payload word points at (not the box) and leaves an empty inline string of
  // type kString.
  void release_payload();
  void destroy();
  void take(Value& other) noexcept {
    std::memcpy(static_cast<void*>(this), static_cast<const void*>(&other), sizeof(Value));
    new (&other) Value();
  }
  void set_object(ValueType t, void* p);

  ValueType type_ = ValueType::kString;
  Rep rep_ = Rep::kInline;
  uint8_t flags_ = 0;
  uint8_t inline_len_ = 0;
  uint32_t clock_ = 0;
  Word word_{};
};

static_assert(sizeof(Value) == 16, "a Value is a header word and a payload word");

const char* value_type_name(ValueType t);

}  // namespace hotkv
