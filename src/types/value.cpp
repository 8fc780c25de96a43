// Value representations (see value.hpp).
#include "hotkv/types/value.hpp"

#include <cstdlib>
#include <limits>

#include "hotkv/types/hash.hpp"
#include "hotkv/types/inventory.hpp"
#include "hotkv/types/list.hpp"
#include "hotkv/types/set.hpp"
#include "hotkv/types/stream.hpp"
#include "hotkv/types/zset.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

namespace {

// kText's heap block: the length, then the bytes (no terminator: nothing reads one).
struct TextBlock {
  uint32_t size;
  char* bytes() { return reinterpret_cast<char*>(this + 1); }
};

TextBlock* new_text(std::string_view s) {
  auto* block = static_cast<TextBlock*>(std::malloc(sizeof(TextBlock) + s.size()));
  if (block == nullptr) {
    throw std::bad_alloc();
  }
  block->size = static_cast<uint32_t>(s.size());
  std::memcpy(block->bytes(), s.data(), s.size());
  return block;
}

template <class T>
void delete_object(void* p) {
  delete static_cast<T*>(p);
}

}  // namespace

void Value::release_payload() {
  Word& w = word();
  switch (rep_) {
    case Rep::kText:
      std::free(w.ptr);
      break;
    case Rep::kRaw:
      delete static_cast<std::string*>(w.ptr);
      break;
    case Rep::kObject:
      switch (type_) {
        case ValueType::kStream:
          delete_object<Stream>(w.ptr);
          break;
        case ValueType::kInventory:
          delete_object<Inventory>(w.ptr);
          break;
        case ValueType::kSet:
          delete_object<Set>(w.ptr);
          break;
        case ValueType::kHash:
          delete_object<Hash>(w.ptr);
          break;
        case ValueType::kZSet:
          delete_object<ZSet>(w.ptr);
          break;
        case ValueType::kList:
          delete_object<List>(w.ptr);
          break;
        case ValueType::kString:
          break;
      }
      break;
    case Rep::kInline:
    case Rep::kInt:
      break;
  }
  type_ = ValueType::kString;
  rep_ = Rep::kInline;
  inline_len_ = 0;
  w.integer = 0;
}

void Value::destroy() {
  release_payload();
  if (has_expiry()) {
    delete box();
    flags_ &= static_cast<uint8_t>(~kHasExpiry);
    word_.integer = 0;
  }
}

void Value::set_expire_raw(int64_t at_ms) {
  if (at_ms == kNoExpiry) {
    if (has_expiry()) {
      ExpiryBox* b = box();
      word_ = b->word;
      flags_ &= static_cast<uint8_t>(~kHasExpiry);
      delete b;
    }
    return;
  }
  if (!has_expiry()) {
    word_.ptr = new ExpiryBox{at_ms, word_};
    flags_ |= kHasExpiry;
    return;
  }
  box()->at_ms = at_ms;
}

void Value::set_object(ValueType t, void* p) {
  release_payload();
  type_ = t;
  rep_ = Rep::kObject;
  word().ptr = p;
}

Value Value::clone() const {
  Value out;
  switch (rep_) {
    case Rep::kInline:
    case Rep::kInt:
      out.rep_ = rep_;
      out.inline_len_ = inline_len_;
      out.word_ = word();
      break;
    case Rep::kText:
    case Rep::kRaw: {
      std::string scratch;
      out.set_text(str(scratch));
      if (rep_ == Rep::kRaw) {
        out.mutable_raw();
      }
      break;
    }
    case Rep::kObject:
      switch (type_) {
        case ValueType::kStream:
          out = from_stream(stream()->clone());
          break;
        case ValueType::kInventory:
          out = from_inventory(inventory()->clone());
          break;
        case ValueType::kSet:
          out = from_set(set()->clone());
          break;
        case ValueType::kHash:
          out = from_hash(hash()->clone());
          break;
        case ValueType::kZSet:
          out = from_zset(zset()->clone());
          break;
        case ValueType::kList:
          out = from_list(list()->clone());
          break;
        case ValueType::kString:
          break;
      }
      break;
  }
  out.set_expire_raw(expire_at_ms());
  return out;
}

Value Value::from_stream(std::unique_ptr<Stream> stream) {
  Value v;
  v.set_object(ValueType::kStream, stream.release());
  return v;
}

Value Value::from_inventory(std::unique_ptr<Inventory> inventory) {
  Value v;
  v.set_object(ValueType::kInventory, inventory.release());
  return v;
}

Value Value::from_set(std::unique_ptr<Set> set) {
  Value v;
  v.set_object(ValueType::kSet, set.release());
  return v;
}

Value Value::from_hash(std::unique_ptr<Hash> hash) {
  Value v;
  v.set_object(ValueType::kHash, hash.release());
  return v;
}

Value Value::from_zset(std::unique_ptr<ZSet> zset) {
  Value v;
  v.set_object(ValueType::kZSet, zset.release());
  return v;
}

Value Value::from_list(std::unique_ptr<List> list) {
  Value v;
  v.set_object(ValueType::kList, list.release());
  return v;
}

size_t Value::memory_bytes() const {
  // Heap blocks count with a typical 16-byte allocator overhead, as Dict's entries do.
  constexpr size_t kMallocOverhead = 16;
  size_t bytes = sizeof(Value) + (has_expiry() ? sizeof(ExpiryBox) + kMallocOverhead : 0);
  const Word& w = word();
  switch (rep_) {
    case Rep::kText:
      return bytes + sizeof(TextBlock) + static_cast<TextBlock*>(w.ptr)->size + kMallocOverhead;
    case Rep::kRaw:
      return bytes + sizeof(std::string) + kMallocOverhead +
             static_cast<std::string*>(w.ptr)->capacity();
    case Rep::kObject:
      switch (type_) {
        case ValueType::kStream:
          return bytes + stream()->memory_bytes();
        case ValueType::kInventory:
          return bytes + inventory()->memory_bytes();
        case ValueType::kSet:
          return bytes + set()->memory_bytes();
        case ValueType::kHash:
          return bytes + hash()->memory_bytes();
        case ValueType::kZSet:
          return bytes + zset()->memory_bytes();
        case ValueType::kList:
          return bytes + list()->memory_bytes();
        case ValueType::kString:
          break;
      }
      return bytes;
    case Rep::kInline:
    case Rep::kInt:
      break;
  }
  return bytes;
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
  // Build first: s may view this value's own bytes.
  Word fresh{};
  Rep rep = Rep::kInline;
  uint8_t len = 0;
  if (s.size() <= kInlineMax) {
    std::memcpy(fresh.bytes, s.data(), s.size());
    len = static_cast<uint8_t>(s.size());
  } else if (s.size() <= std::numeric_limits<uint32_t>::max()) {
    fresh.ptr = new_text(s);
    rep = Rep::kText;
  } else {
    fresh.ptr = new std::string(s);
    rep = Rep::kRaw;
  }
  release_payload();
  rep_ = rep;
  inline_len_ = len;
  word() = fresh;
}

std::string_view Value::str(std::string& scratch) const {
  const Word& w = word();
  switch (rep_) {
    case Rep::kInline:
      return {w.bytes, inline_len_};
    case Rep::kInt:
      scratch.clear();
      append_int64(scratch, w.integer);
      return scratch;
    case Rep::kText: {
      auto* block = static_cast<TextBlock*>(w.ptr);
      return {block->bytes(), block->size};
    }
    case Rep::kRaw:
      return *static_cast<const std::string*>(w.ptr);
    case Rep::kObject:
      break;
  }
  return {};
}

size_t Value::str_len() const {
  std::string scratch;
  return str(scratch).size();
}

std::string& Value::mutable_raw() {
  if (rep_ != Rep::kRaw) {
    std::string scratch;
    auto* raw = new std::string(str(scratch));
    release_payload();
    rep_ = Rep::kRaw;
    word().ptr = raw;
  }
  return *static_cast<std::string*>(word().ptr);
}

const char* Value::encoding_name() const {
  switch (type_) {
    case ValueType::kStream:
      return "stream";
    case ValueType::kInventory:
      return "inventory";
    case ValueType::kSet:
      return set()->encoding_name();
    case ValueType::kHash:
      return hash()->listpack() ? "listpack" : "hashtable";
    case ValueType::kZSet:
      return zset()->encoding_name();
    case ValueType::kList:
      return "quicklist";  // Redis 7.0 reports every list so
    case ValueType::kString:
      break;
  }
  if (rep_ == Rep::kInt) {
    return "int";
  }
  return rep_ != Rep::kRaw && str_len() <= 44 ? "embstr" : "raw";
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
