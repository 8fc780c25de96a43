// Hash: the value behind HSET/HGET/HSCAN — a map from field to value, both binary strings.
//
// Two encodings, named as Redis 7 names them in OBJECT ENCODING:
// - listpack: while the hash is small (at most hash-max-listpack-entries fields, every field
//   and value at most hash-max-listpack-value bytes: EncodingLimits) the pairs sit in one
//   vector in insertion order and are found by a linear search. A small hash is then one allocation
//   plus its strings, and HGETALL/HSCAN reply in the same order Redis does (Redis's listpack keeps
//   insertion order).
// - hashtable: past either limit the pairs move, once and for good (Redis never converts
//   back), into a Dict, whose reverse-binary cursor gives HSCAN the SCAN guarantee while the
//   table grows or shrinks between calls.
//
// Knows nothing of RESP or of commands. Not thread-safe: a hash belongs to one shard and only
// that shard's thread touches it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hotkv/types/dict.hpp"
#include "hotkv/types/encoding_limits.hpp"

namespace hotkv {

class Hash {
 public:
  enum class Encoding : uint8_t { kListpack, kHashtable };

  Hash() = default;
  Hash(const Hash&) = delete;
  Hash& operator=(const Hash&) = delete;
  std::unique_ptr<Hash> clone() const;

  size_t size() const { return listpack() ? pairs_.size() : dict_.size(); }
  bool empty() const { return size() == 0; }
  Encoding encoding() const { return encoding_; }
  bool listpack() const { return encoding_ == Encoding::kListpack; }

  // The value of `field`, or nullptr. The pointer stays valid until the next write.
  const std::string* get(std::string_view field) const;
  // Sets field to value (added at the end of a listpack when new); returns true if the field
  // is new. As Redis 7.0's hashTypeSet: a field or value longer than
  // limits.hash_max_listpack_value converts a listpack to a hashtable first, and a listpack
  // left with more than limits.hash_max_listpack_entries fields (after an update as well as
  // after an addition, so a lowered limit takes effect) converts after.
  bool set(std::string_view field, std::string_view value, const EncodingLimits& limits);
  // Removes field; returns false if it was absent. Never converts back to a listpack.
  bool erase(std::string_view field);
  // Moves a listpack's pairs into a hashtable (no-op if already one).
  void convert_to_hashtable();

  // Calls fn(const std::string& field, const std::string& value) for every pair: insertion
  // order for a listpack, table order for a hashtable. fn must not modify the hash.
  template <class F>
  void for_each(F&& fn) const;

  // One HSCAN step: calls fn(field, value) for the pairs of the bucket at `cursor` and returns
  // the next cursor (0: done). A listpack is returned whole in one step, with cursor 0, as
  // Redis does. Guarantee (hashtable): a field present for the whole scan is visited at least
  // once; it may be visited twice.
  template <class F>
  uint64_t scan(uint64_t cursor, F&& fn);

  // The pair at a uniformly random position (listpack) or a random bucket's random entry
  // (hashtable, as Redis's dictGetFairRandomKey is close to uniform). REQUIRES: !empty().
  template <class Rng>
  std::pair<std::string_view, const std::string*> random_pair(Rng& rng);

  // Rough bytes owned by the hash (for MEMORY USAGE-style accounting).
  size_t memory_bytes() const;

 private:
  using Pair = std::pair<std::string, std::string>;
  // The hashtable keeps a field's bytes in its node (types/dict.hpp): fn gets a view, or a
  // copy for callers that take the field as const std::string&.
  template <class F>
  static void call_with_field(F& fn, std::string_view f, const std::string& v) {
    if constexpr (std::is_invocable_v<F&, std::string_view, const std::string&>) {
      fn(f, v);
    } else {
      const std::string field(f);
      fn(field, v);
    }
  }

  std::vector<Pair>::iterator find_pair(std::string_view field);

  Encoding encoding_ = Encoding::kListpack;
  std::vector<Pair> pairs_;         // listpack: insertion order
  mutable Dict<std::string> dict_;  // hashtable (Dict iterates through non-const calls)
};

template <class F>
void Hash::for_each(F&& fn) const {
  if (listpack()) {
    for (const auto& [f, v] : pairs_) {
      fn(f, std::as_const(v));
    }
    return;
  }
  dict_.for_each([&](std::string_view f, std::string& v) { call_with_field(fn, f, v); });
}

template <class F>
uint64_t Hash::scan(uint64_t cursor, F&& fn) {
  if (listpack()) {
    for_each(fn);
    return 0;
  }
  return dict_.scan(cursor, [&](std::string_view f, std::string& v) { call_with_field(fn, f, v); });
}

template <class Rng>
std::pair<std::string_view, const std::string*> Hash::random_pair(Rng& rng) {
  if (listpack()) {
    std::uniform_int_distribution<size_t> pick(0, pairs_.size() - 1);
    const Pair& p = pairs_[pick(rng)];
    return {p.first, &p.second};
  }
  auto* e = dict_.random_entry(rng);
  return {e->key(), &e->value};
}

}  // namespace hotkv
